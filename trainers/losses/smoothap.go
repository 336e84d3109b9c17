package losses

import (
	G "gorgonia.org/gorgonia"
)

// smoothAP is Smooth-AP (Brown et al. 2020), the baseline of Patel et al. 2024 (§2,
// §4: "SAP"), on unit embeddings with cosine similarities s. The rank of a
// positive x of query q among the positives and among the whole batch is
// smoothed by a sigmoid of temperature τ = 0.01 on similarity differences,
//
//	AP̃(q) = 1/|P_q| Σ_{x∈P_q} (1 + Σ_{z∈P_q∖{x}} σ_τ(s_qz − s_qx)) / (1 + Σ_{z∈𝓑∖{q,x}} σ_τ(s_qz − s_qx))
//	L     = 1 − 1/|Q| Σ_{q∈Q} AP̃(q)
//
// over the queries Q with at least one positive; σ_τ(u) = 1/(1 + e^{−u/τ}).
// The graph shares RS@k's (positive pairs × B) grid; simix = 1 extends the
// batch by SiMix virtual examples (simix.go; Patel et al. 2024 applies SiMix to RS@k,
// here it is offered for its Smooth-AP baseline too).
type smoothAP struct {
	base
	tau   float64
	simix bool
}

func init() {
	Register(Info{
		Name:    "smoothap",
		Summary: "1 − mean_q 1/|P| Σ_P (1 + Σ_P σ_τ(s_qz−s_qx)) / (1 + Σ_𝓑 σ_τ(s_qz−s_qx)), τ = 0.01 (Brown 2020; Patel et al. 2024's baseline)",
		Hyper:   map[string]float64{"tau": 0.01, "simix": 0},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &smoothAP{base: base{name: "smoothap"}, tau: c.Hyper["tau"]}
			if err := positive(map[string]float64{"tau": l.tau}); err != nil {
				return nil, err
			}
			var err error
			if l.simix, err = hyperFlag(c, "simix"); err != nil {
				return nil, err
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *smoothAP) graph(b *builder) *G.Node {
	r := b.rankGrid(l.tau, "z", "zpos")
	ap := div(addS(r[1], 1), addS(r[0], 1))
	return addS(neg(total(mul(ap, b.input("w", b.T)))), 1)
}

// Forward implements Loss.
func (l *smoothAP) Forward(bt Batch, grad []float32) (float64, error) {
	p, err := l.rankGridNet(bt, grad, l.simix)
	if err != nil || p.n == nil {
		return 0, err
	}
	w := p.n.in("w")
	for t := range w {
		w[t] = 0
		if t < len(p.qs) {
			w[t] = 1 / float64(p.queries*p.npos[p.qs[t]])
		}
	}
	return l.r.run(p.n, bt, grad)
}
