package losses

import (
	"math"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// arcFace is ArcFace (Deng et al. 2019), Roth et al. 2020 §A.1 eq. 6: softmax
// cross-entropy over scaled cosines to unit class centres W_c, with an
// additive angular margin m on the target class,
//
//	L = −1/b Σ_i log( e^{s·cos(θ_{i,y_i} + m)} / (e^{s·cos(θ_{i,y_i} + m)} + Σ_{c≠y_i} e^{s·cos θ_{ic}}) ),
//
// cos θ_ic = φ̂_iᵀŴ_c, scale s and margin m. cos(θ + m) = cos θ·cos m − sin θ·sin m
// with sin θ = √(1 − cos²θ + 10⁻⁸) (finite gradient at θ = 0). Where θ + m
// would exceed π (cos θ ≤ −cos m) the target logit is s(cos θ − m·sin m), the
// monotone continuation of Deng et al.'s code. Centres start at
// U(−1/√D, 1/√D) and train with the absolute learning rate centre_lr, the
// rate of Roth et al. 2020 by default.
type arcFace struct {
	proxies
	s, m float64
}

func init() {
	Register(Info{
		Name:    "arcface",
		Summary: "softmax CE of s·cos(θ_y + m) vs s·cos θ_c, s = {{scale}}, m = {{margin}}, centre lr {{centre_lr}} (Deng 2019; Roth et al. 2020 eq. 6)",
		Hyper:   map[string]float64{"scale": 16, "margin": 0.5, "centre_lr": 5e-4},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &arcFace{s: c.hyperParam("scale"), m: c.hyperParam("margin")}
			lr := c.hyperParam("centre_lr")
			if err := positive(map[string]float64{"scale": l.s, "margin": l.m, "centre_lr": lr}); err != nil {
				return nil, err
			}
			var p *param.Param
			var err error
			if l.proxies, p, err = newProxies("arcface", c, uniformInit(c.Dim)); err != nil {
				return nil, err
			}
			p.LR = lr
			l.r.graph = l.graph
			return l, nil
		},
	})
}

func (l *arcFace) graph(b *builder) *G.Node {
	cos, Y := b.proxyCos()
	cy := pick(cos, Y)
	sin := sqrt(addS(neg(sq(cy)), 1+1e-8))
	arc := sub(mulS(cy, math.Cos(l.m)), mulS(sin, math.Sin(l.m))) // cos(θ + m)
	f := b.input("f", b.B)                                        // 1 where θ + m ≤ π
	phi := add(mul(arc, f), mul(addS(cy, -l.m*math.Sin(l.m)), addS(neg(f), 1)))
	logits := mulS(add(cos, colMul(Y, sub(phi, cy))), l.s)
	return mulS(total(sub(b.lse(logits, nil, false), mulS(phi, l.s))), 1/float64(b.B))
}

// Forward implements Loss.
func (l *arcFace) Forward(b Batch, grad []float32) (float64, error) {
	return l.forward(b, grad, func(n *net) {
		// f_i = [cos θ_{i,y_i} > −cos m], on the float values.
		u := unitRows(b.Emb, b.B, b.D)
		w := l.r.params[0]
		c := unitRows(w.Data, l.C, l.D)
		f := n.in("f")
		for i, y := range b.Labels {
			dot := 0.0
			for k := 0; k < b.D; k++ {
				dot += u[i*b.D+k] * c[y*b.D+k]
			}
			f[i] = 0
			if dot > -math.Cos(l.m) {
				f[i] = 1
			}
		}
	})
}
