package losses

import (
	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// proxyTriplet is the proxy triplet loss of Movshovitz-Attias et al. (2017),
// Fehérvári et al. 2019 §2.9: the triplet loss with the positive and negative samples
// replaced by learnable class proxies ψ_c (one per training class). With unit
// embeddings φ̂ and unit proxies ψ̂ (Fehérvári et al. 2019 Tab. 1: normalised), every sample
// i forms a triplet with each other class c ≠ y_i,
//
//	L = 1/(b(C−1)) Σ_i Σ_{c≠y_i} [ ‖φ̂_i − ψ̂_{y_i}‖² − ‖φ̂_i − ψ̂_c‖² + M ]₊
//	  = 1/(b(C−1)) Σ_i Σ_{c≠y_i} [ 2cos(φ_i, ψ_c) − 2cos(φ_i, ψ_{y_i}) + M ]₊,
//
// squared Euclidean distances and margin M (default: Fehérvári et al. 2019's released code
// (DMLPlayground ProxyTripletLoss defaults; that code sums over c and divides
// by b, this loss averages over the b(C−1) triplets so the scale does not grow
// with C). Proxies start at U(−1/√D, 1/√D) and train at proxy_lr_mult times
// the base rate (by default the backbone's rate, as in the released code).
type proxyTriplet struct {
	proxies
	margin float64
}

func init() {
	Register(Info{
		Name:    "proxytriplet",
		Summary: "mean over (i, c≠y_i) of [‖φ̂−ψ̂_y‖² − ‖φ̂−ψ̂_c‖² + M]₊, M = {{margin}}, proxy lr ×{{proxy_lr_mult}}, learnable unit proxies (Movshovitz-Attias 2017; Fehérvári et al. 2019 §2.9)",
		Hyper:   map[string]float64{"margin": 1, "proxy_lr_mult": 1},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &proxyTriplet{margin: c.hyperParam("margin")}
			mult := c.hyperParam("proxy_lr_mult")
			if err := positive(map[string]float64{"margin": l.margin, "proxy_lr_mult": mult}); err != nil {
				return nil, err
			}
			var p *param.Param
			var err error
			if l.proxies, p, err = newProxies("proxytriplet", c, uniformInit(c.Dim)); err != nil {
				return nil, err
			}
			p.LRScale = mult
			l.r.graph = l.graph
			return l, nil
		},
	})
}

func (l *proxyTriplet) graph(b *builder) *G.Node {
	cos, Y := b.proxyCos()
	terms := relu(addS(mulS(colSub(cos, pick(cos, Y)), 2), l.margin))
	notY := addS(neg(Y), 1)
	return mulS(total(mul(terms, notY)), 1/float64(b.B*(l.C-1)))
}

// Forward implements Loss.
func (l *proxyTriplet) Forward(b Batch, grad []float32) (float64, error) {
	return l.forward(b, grad, nil)
}
