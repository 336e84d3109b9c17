package losses

import (
	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// normSoftmax is the normalised softmax loss of Zhai & Wu (2018), Roth et al. 2020
// §A.1 eq. 19: cross-entropy over cosine logits to unit class proxies,
//
//	L = −1/b Σ_i log( exp(φ̂_iᵀψ̂_{y_i}/T) / Σ_c exp(φ̂_iᵀψ̂_c/T) ),  T the temperature.
//
// The denominator runs over all classes as in Zhai & Wu and Roth et al.'s
// reference code (eq. 19 as printed excludes y_i and omits 1/b). Proxies start
// at U(−1/√D, 1/√D) and train with the absolute learning rate proxy_lr (Roth
// et al. 2020's by default).
type normSoftmax struct {
	proxies
	temp float64
}

func init() {
	Register(Info{
		Name:    "normsoftmax",
		Summary: "cross-entropy of cos(φ, ψ_c)/T, T = {{temperature}}, proxy lr {{proxy_lr}} (Zhai & Wu 2018; Roth et al. 2020 eq. 19)",
		Hyper:   map[string]float64{"temperature": 0.05, "proxy_lr": 1e-5},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &normSoftmax{temp: c.hyperParam("temperature")}
			lr := c.hyperParam("proxy_lr")
			if err := positive(map[string]float64{"temperature": l.temp, "proxy_lr": lr}); err != nil {
				return nil, err
			}
			var p *param.Param
			var err error
			if l.proxies, p, err = newProxies("normsoftmax", c, uniformInit(c.Dim)); err != nil {
				return nil, err
			}
			p.LR = lr
			l.r.graph = l.graph
			return l, nil
		},
	})
}

func (l *normSoftmax) graph(b *builder) *G.Node {
	cos, Y := b.proxyCos()
	logits := mulS(cos, 1/l.temp)
	return mulS(total(sub(b.lse(logits, nil, false), pick(logits, Y))), 1/float64(b.B))
}

// Forward implements Loss.
func (l *normSoftmax) Forward(b Batch, grad []float32) (float64, error) {
	return l.forward(b, grad, nil)
}
