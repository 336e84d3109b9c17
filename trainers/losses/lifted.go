package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// lifted is the lifted structured loss of Oh Song et al. (2016), Fehérvári et al. 2019
// §2.3, on raw (un-normalised) embeddings (Fehérvári et al. 2019 Tab. 1: no output
// normalisation). Every positive pair {i, j} (y_i = y_j, i < j) is compared
// with all negatives of both its members,
//
//	J_ij = log( Σ_{k∈𝒩_i} e^{α − D_ik} + Σ_{l∈𝒩_j} e^{α − D_jl} ) + D_ij
//	L    = 1/(2|𝒫|) Σ_{{i,j}∈𝒫} [J_ij]₊²
//
// with D the Euclidean distance and margin α = 1 (Oh Song et al.). The log of
// the two sums is computed as log(e^{l_i} + e^{l_j}) of the per-row masked
// log-sum-exps l_i, so it is stable for any embedding scale. A batch without
// positive pairs or without negatives gives L = 0.
type lifted struct {
	base
	margin float64
}

func init() {
	Register(Info{
		Name:    "lifted",
		Raw:     true,
		Summary: "1/(2|P|) Σ_P [log(Σ_{N_i} e^{α−D_ik} + Σ_{N_j} e^{α−D_jl}) + D_ij]₊², α = 1, raw embeddings (Oh Song 2016; Fehérvári et al. 2019 §2.3)",
		Hyper:   map[string]float64{"margin": 1},
		New: func(c Config) (Loss, error) {
			l := &lifted{base: base{name: "lifted"}, margin: c.Hyper["margin"]}
			if err := checkFinite(map[string]float64{"margin": l.margin}); err != nil {
				return nil, err
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *lifted) graph(b *builder) *G.Node {
	D := pairDistE(b.E)
	rowL := b.lse(addS(neg(D), l.margin), b.input("neg", b.B, b.B), false) // l_i
	pi, pj := b.index("pi", b.T), b.index("pj", b.T)
	dij := rowDist(gather(b.E, pi), gather(b.E, pj))
	J := add(lse2(gatherVec(rowL, pi), gatherVec(rowL, pj)), dij)
	return total(mul(sq(relu(J)), b.input("w", b.T)))
}

// Forward implements Loss.
func (l *lifted) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	B, y := bt.B, bt.Labels
	var pi, pj []int
	hasNeg := false
	for i := 0; i < B; i++ {
		for j := i + 1; j < B; j++ {
			if y[i] == y[j] {
				pi, pj = append(pi, i), append(pj, j)
			} else {
				hasNeg = true
			}
		}
	}
	if len(pi) == 0 || !hasNeg {
		zeroGrads(grad, nil)
		return 0, nil
	}
	n, err := l.r.get(shape{B: B, D: bt.D, T: capacityFor(len(pi), B)})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	negs := n.in("neg")
	for i := 0; i < B; i++ {
		for j := 0; j < B; j++ {
			negs[i*B+j] = 0
			if y[j] != y[i] {
				negs[i*B+j] = 1
			}
		}
	}
	a, p, w := n.idx("pi"), n.idx("pj"), n.in("w")
	for t := range a {
		a[t], p[t], w[t] = 0, 0, 0
		if t < len(pi) {
			a[t], p[t], w[t] = pi[t], pj[t], 1/float64(2*len(pi))
		}
	}
	return l.r.run(n, bt, grad)
}
