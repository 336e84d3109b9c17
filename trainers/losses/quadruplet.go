package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// quadruplet is the quadruplet loss of Chen et al. (2017), Roth et al. 2020 §A.1
// eq. 14, on unit embeddings with Euclidean distance d. The triplets (a, p, n)
// come from the miner (default distance-weighted: Roth et al.'s code draws the first
// negative that way); for each, a second negative l with y_l ∉ {y_a, y_n} is
// drawn uniformly (Batch.Rng), and
//
//	L = 1/|𝒯| Σ_𝒯 [d(a,p) − d(a,n) + γ₁]₊ + 1/|𝒬| Σ_𝒬 [d(a,p) − d(n,l) + γ₂]₊
//
// with γ₁ = 1, γ₂ = 0.5 and 𝒬 ⊆ 𝒯 the triplets for which such an l exists
// (none in a batch of two classes). The second term pushes the pair (n, l),
// which shares no class with a, further apart than the positive pair, as in
// Chen et al. and Roth et al.'s code; eq. 14 as printed reads d(φ_i, φ_k) −
// d(φ_l, φ_k), i.e. (a,n) instead of (a,p).
type quadruplet struct {
	tuples
	m1, m2 float64
}

func init() {
	Register(Info{
		Name:    "quadruplet",
		Summary: "mean [d(a,p) − d(a,n) + γ₁]₊ + mean [d(a,p) − d(n,l) + γ₂]₊, l ∉ {y_a, y_n}, γ₁ = 1, γ₂ = 0.5 (Chen 2017; Roth et al. 2020 eq. 14)",
		Hyper:   map[string]float64{"margin1": 1, "margin2": 0.5},
		Miner:   "distance",
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &quadruplet{m1: c.Hyper["margin1"], m2: c.Hyper["margin2"]}
			if err := positive(map[string]float64{"margin1": l.m1, "margin2": l.m2}); err != nil {
				return nil, err
			}
			var err error
			l.tuples, err = newTuples("quadruplet", c, "distance", l.m1)
			l.r.graph = l.graph
			return l, err
		},
	})
}

func (l *quadruplet) graph(b *builder) *G.Node {
	u := b.unitE()
	ea, en := gather(u, b.index("a", b.T)), gather(u, b.index("n", b.T))
	dap := rowDist(ea, gather(u, b.index("p", b.T)))
	dan := rowDist(ea, en)
	dnl := rowDist(en, gather(u, b.index("l", b.T)))
	trip := mul(relu(addS(sub(dap, dan), l.m1)), b.input("w", b.T))
	quad := mul(relu(addS(sub(dap, dnl), l.m2)), b.input("wq", b.T))
	return add(total(trip), total(quad))
}

// Forward implements Loss.
func (l *quadruplet) Forward(bt Batch, grad []float32) (float64, error) {
	tr, err := mineTriplets(&l.tuples, bt, grad)
	if err != nil {
		return 0, err
	}
	if tr.Len() == 0 {
		zeroGrads(grad, nil)
		return 0, nil
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D, T: capacityFor(tr.Len(), bt.B)})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	y := bt.Labels
	a, p, ng, ls := n.idx("a"), n.idx("p"), n.idx("n"), n.idx("l")
	w, wq := n.in("w"), n.in("wq")
	quads := 0
	var cand []int
	for t := range a {
		a[t], p[t], ng[t], ls[t], w[t], wq[t] = 0, 0, 0, 0, 0, 0
		if t >= tr.Len() {
			continue
		}
		a[t], p[t], ng[t] = int(tr.A[t]), int(tr.P[t]), int(tr.N[t])
		w[t] = 1 / float64(tr.Len())
		cand = cand[:0]
		for j, yj := range y {
			if yj != y[a[t]] && yj != y[ng[t]] {
				cand = append(cand, j)
			}
		}
		if len(cand) > 0 {
			ls[t], wq[t] = cand[bt.Rng.Intn(len(cand))], 1
			quads++
		}
	}
	for t := range wq {
		wq[t] /= float64(max(quads, 1))
	}
	return l.r.run(n, bt, grad)
}
