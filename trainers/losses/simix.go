package losses

import (
	"fmt"
	"math/rand"
)

// SiMix, similarity mixup (Patel et al. 2024 §3.3, eqs. 8–10), is an option of the
// similarity-ranking losses recallk (RS@k) and smoothap (hyper-parameter
// simix = 1). The batch 𝓑 is extended by a virtual batch 𝓑̂ with one virtual
// example xz_α per unordered pair of positives {x, z} of 𝓑 (all pairs, as the
// paper prescribes), α ~ U(0, 1), labelled with the class of x and z. Its
// (never re-normalised) embedding is v = α·x + (1 − α)·z (eq. 8), so its
// similarities are mixed scalar similarities of the originals,
//
//	s(w, xz_α)          = α·s_wx + (1 − α)·s_wz                                (eq. 9)
//	s(xz_α₁, yw_α₂)     = α₁α₂·s_xy + (1−α₁)(1−α₂)·s_zw + α₁(1−α₂)·s_xw + (1−α₁)α₂·s_zy   (eq. 10)
//
// i.e. the similarity matrix of 𝓑 ∪ 𝓑̂ is M·S·Mᵀ with S = UUᵀ the cosine
// matrix of the unit batch U and M = [I; A] the (B+V)×B mixing matrix whose
// virtual rows hold α and 1 − α. The ranking grid computes (M·U)(M·U)ᵀ, the
// same numbers (and, by the chain rule through M, the exact gradient
// w.r.t. E). Virtual examples are queries and database items alike
// (Alg. 2 lines 15–17): the loss averages over all queries of 𝓑 ∪ 𝓑̂.
// α is drawn from Batch.Rng, so the loss needs a random source with SiMix.

// simix is the virtual batch of one training batch.
type simix struct {
	labels []int     // B + V labels: the batch's, then the virtual examples'
	mix    []float64 // (B+V)×B row-major mixing matrix M = [I; A]
	V      int
}

// newSimix enumerates the unordered positive pairs (x < z) of labels in
// index order and draws one α ~ U(0, 1) per pair from rng.
func newSimix(labels []int, rng *rand.Rand) (simix, error) {
	if rng == nil {
		return simix{}, fmt.Errorf("simix needs a random source (Batch.Rng) for the mixing weights")
	}
	B := len(labels)
	type pair struct {
		x, z  int
		alpha float64
	}
	var ps []pair
	for x := 0; x < B; x++ {
		for z := x + 1; z < B; z++ {
			if labels[x] == labels[z] {
				ps = append(ps, pair{x, z, rng.Float64()})
			}
		}
	}
	s := simix{V: len(ps), labels: append(append(make([]int, 0, B+len(ps)), labels...), make([]int, len(ps))...)}
	n := B + s.V
	s.mix = make([]float64, n*B)
	for i := 0; i < B; i++ {
		s.mix[i*B+i] = 1
	}
	for k, p := range ps {
		r := (B + k) * B
		s.mix[r+p.x] = p.alpha
		s.mix[r+p.z] = 1 - p.alpha
		s.labels[B+k] = labels[p.x]
	}
	return s, nil
}

// simixKMax is RS@k's k_max with SiMix when k_max is not given: the paper's
// K = {1, 2, 4, 8, 12, …, 32} (Patel et al. 2024 §4, "RS@k hyper-parameters").
const simixKMax = 32

// simixKs is the set K of RS@k with SiMix: {1, 2, 4, 8} and then steps of 4
// up to kMax, i.e. the paper's {1, 2, 4, 8, 12, …, 32} for kMax = 32
// (Patel et al. 2024 §4, "RS@k hyper-parameters").
func simixKs(kMax int) []int {
	var ks []int
	for k := 1; k <= min(kMax, 8); k *= 2 {
		ks = append(ks, k)
	}
	for k := 12; k <= kMax; k += 4 {
		ks = append(ks, k)
	}
	return ks
}

// rankBatch is the ranking set of a similarity loss: the batch labels, or,
// with SiMix, the labels of 𝓑 ∪ 𝓑̂ and the mixing matrix.
func rankBatch(bt Batch, on bool) (labels []int, sm simix, err error) {
	if !on {
		return bt.Labels, simix{}, nil
	}
	sm, err = newSimix(bt.Labels, bt.Rng)
	return sm.labels, sm, err
}

// setMix copies the mixing matrix into the graph input "mix" (SiMix only).
func (s simix) setMix(n *net) {
	if s.V > 0 {
		copy(n.in("mix"), s.mix)
	}
}
