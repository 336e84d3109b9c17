package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// prototypical is the prototypical-network loss of Snell et al. (2017), seed
// 002 §2.8 eq. 13, with the batch as one episode on raw embeddings (Fehérvári et al. 2019
// Tab. 1: no output normalisation). The samples of every class c with
// n_c ≥ 2 samples in the batch are split in batch order into a support set
// 𝒮_c (the first ⌊f·n_c⌋, clipped to [1, n_c − 1]; f = 0.5) and queries 𝒬_c
// (the rest). With prototypes μ_c = mean of 𝒮_c and K the classes of the
// episode,
//
//	L = 1/|𝒬| Σ_{q∈𝒬} −log( e^{−‖φ_q − μ_{y_q}‖²} / Σ_{k∈K} e^{−‖φ_q − μ_k‖²} ).
//
// Classes with a single sample take no part; an episode with fewer than two
// classes gives L = 0. The ‖φ_q‖² term is common to a query's logits and is
// dropped: logits 2φ_qᵀμ_k − ‖μ_k‖².
type prototypical struct {
	base
	frac float64
}

func init() {
	Register(Info{
		Name:    "prototypical",
		Raw:     true,
		Summary: "episode = batch: −log softmax_k(−‖φ_q − μ_k‖²), μ_k = mean of the first half of class k, queries the rest, raw embeddings (Snell 2017; Fehérvári et al. 2019 eq. 13)",
		Hyper:   map[string]float64{"support": 0.5},
		New: func(c Config) (Loss, error) {
			l := &prototypical{base: base{name: "prototypical"}, frac: c.Hyper["support"]}
			if !(l.frac > 0 && l.frac < 1) {
				return nil, fmt.Errorf("hyper-parameter support must be in (0, 1), got %v", l.frac)
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

// graph: the prototypes are A·E with A (K×B) the support-averaging matrix; K
// is the capacity ⌊B/2⌋ (most classes with two samples), unused columns are
// masked out.
func (l *prototypical) graph(b *builder) *G.Node {
	K := b.B / 2
	M := must(G.Mul(b.input("avg", K, b.B), b.E)) // K×D prototypes
	logits := sub(mulS(matmulT(b.E, M), 2), b.rowsOf(rowSum(sq(M)), b.B))
	Y := b.input("Y", b.B, K)
	terms := sub(b.lse(logits, b.input("cols", b.B, K), false), pick(logits, Y))
	return total(mul(terms, b.input("w", b.B)))
}

// Forward implements Loss.
func (l *prototypical) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	B, K := bt.B, bt.B/2
	// Classes in order of first appearance, with their members in batch order.
	var members [][]int
	slot := map[int]int{}
	for i, y := range bt.Labels {
		s, ok := slot[y]
		if !ok {
			s = len(members)
			slot[y] = s
			members = append(members, nil)
		}
		members[s] = append(members[s], i)
	}
	avg, cols, Y, w := n.in("avg"), n.in("cols"), n.in("Y"), n.in("w")
	clear(avg)
	clear(cols)
	clear(Y)
	clear(w)
	k, queries := 0, 0
	for _, m := range members {
		if len(m) < 2 {
			continue
		}
		ns := min(max(int(l.frac*float64(len(m))), 1), len(m)-1)
		for _, i := range m[:ns] {
			avg[k*B+i] = 1 / float64(ns)
		}
		for _, q := range m[ns:] {
			Y[q*K+k], w[q] = 1, 1
			queries++
		}
		k++
	}
	if k < 2 {
		zeroGrads(grad, nil)
		return 0, nil
	}
	for i := 0; i < B; i++ {
		for c := 0; c < k; c++ {
			cols[i*K+c] = 1
		}
		w[i] /= float64(queries)
	}
	return l.r.run(n, bt, grad)
}
