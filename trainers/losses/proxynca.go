package losses

import (
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// proxyNCA is ProxyNCA (Movshovitz-Attias et al. 2017), Roth et al. 2020 §A.1 eq. 13:
//
//	L = −1/b Σ_i log( exp(−d(φ_i, ψ_{y_i})) / Σ_{c≠y_i} exp(−d(φ_i, ψ_c)) )
//	  = 1/b Σ_i [ d_{i,y_i} + log Σ_{c≠y_i} exp(−d_{ic}) ]
//
// with d the squared Euclidean distance between s·φ̂_i and s·ψ̂_c (unit
// embeddings and proxies scaled by s, the hyper-parameter scale: by default
// the temperature of Roth et al.'s reference code), i.e. d_{ic} = 2s²(1 −
// φ̂_iᵀψ̂_c). Proxies start at N(0, 1/64) and train with LRScale =
// proxy_lr_mult times the base rate (by default the reference code's proxy
// lr multiplier; Roth et al. 2020 gives no proxy lr for ProxyNCA).
type proxyNCA struct {
	proxies
	scale float64
}

func init() {
	Register(Info{
		Name:    "proxynca",
		Summary: "mean d(φ,ψ_y) + log Σ_{c≠y} e^{−d(φ,ψ_c)}, d = ‖sφ̂ − sψ̂‖², s = {{scale}}, proxy lr ×{{proxy_lr_mult}} (Movshovitz-Attias 2017; Roth et al. 2020 eq. 13)",
		Hyper:   map[string]float64{"scale": 3, "proxy_lr_mult": 50},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &proxyNCA{scale: c.hyperParam("scale")}
			mult := c.hyperParam("proxy_lr_mult")
			if err := positive(map[string]float64{"scale": l.scale, "proxy_lr_mult": mult}); err != nil {
				return nil, err
			}
			var p *param.Param
			var err error
			l.proxies, p, err = newProxies("proxynca", c, func(r *rand.Rand) float64 { return r.NormFloat64() / 8 })
			if err != nil {
				return nil, err
			}
			p.LRScale = mult
			l.r.graph = l.graph
			return l, nil
		},
	})
}

func (l *proxyNCA) graph(b *builder) *G.Node {
	cos, Y := b.proxyCos()
	negD := mulS(addS(cos, -1), 2*l.scale*l.scale) // −d_ic
	notY := addS(neg(Y), 1)
	perSample := sub(b.lse(negD, notY, false), pick(negD, Y))
	return mulS(total(perSample), 1/float64(b.B))
}

// Forward implements Loss.
func (l *proxyNCA) Forward(b Batch, grad []float32) (float64, error) { return l.forward(b, grad, nil) }
