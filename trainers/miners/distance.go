package miners

import (
	"math"
	"math/rand"
)

// DistanceWeighted is the distance-weighted sampling of Wu et al. (2017), as
// used for all ranking losses in Roth et al. 2020 (§A.2 eqs. 23–24). For points spread
// uniformly on the unit sphere S^{D−1} the pairwise distance has density
//
//	q(d) ∝ d^{D−2} · [1 − d²/4]^{(D−3)/2}                               (eq. 23)
//
// and negatives are drawn with P(n|a) ∝ min(λ, q(d(a,n))^{−1}) (eq. 24), so
// that every distance range is represented instead of the mass near √2.
//
// Roth et al. (2020) print the bracket of eq. 23 as [1 − d/4]; that is a typesetting
// slip: the density of ‖x − y‖ for x, y uniform on S^{D−1} follows from
// t = x·y = 1 − d²/2 with density ∝ (1 − t²)^{(D−3)/2} = (d²(1 − d²/4))^{(D−3)/2}
// and |dt| = d·dd, which gives d^{D−2}(1 − d²/4)^{(D−3)/2}, the form of Wu et
// al. and of Roth et al.'s reference code. We use that.
//
// The cap λ is implemented as in Wu et al.'s and Roth et al.'s code: distances
// are clipped from below to Cutoff = 0.5 before evaluating q^{−1}. Because
// q^{−1} is decreasing on (0, d*] with d*² = 4(D−2)/(2D−5) (d* ≈ 1.417 for
// D = 128) this equals min(q^{−1}(Cutoff), q^{−1}(d)) below the upper cut.
// Negatives with d > UpperCutoff = 1.4 get weight zero (Wu et al.'s
// "non-zero-loss cut-off"; Roth et al. 2020: "limit the distances to 1.4"); if that
// leaves no negative for an anchor, the upper cut is dropped for that anchor
// (Roth et al.'s code notes that the cut can leave no negatives). Distances are
// also clipped above at 2 − 10⁻⁶ so q^{−1} stays finite for un-normalised
// inputs. The positive is drawn uniformly. One triplet per anchor; anchors
// without positives or negatives are skipped.
type DistanceWeighted struct {
	Dim         int     // embedding dimension D (set by the loss through SetDim)
	Cutoff      float64 // λ, lower distance clip, default 0.5
	UpperCutoff float64 // weight-zero cut above this distance, default 1.4; ≤ 0 disables
}

func init() {
	Register(Info{Name: "distance", Summary: "negatives drawn ∝ min(λ, 1/q(d)), q(d) = d^{D−2}(1−d²/4)^{(D−3)/2}, λ cut 0.5, upper cut 1.4 (Wu et al. 2017; Roth et al. 2020 eqs. 23–24)",
		New: func() Miner { return &DistanceWeighted{Dim: 128, Cutoff: 0.5, UpperCutoff: 1.4} }})
}

// Name implements Miner.
func (*DistanceWeighted) Name() string { return "distance" }

// SetDim implements DimSetter.
func (m *DistanceWeighted) SetDim(d int) { m.Dim = d }

// LogInvQ returns log q(d)^{−1} up to an additive constant, with d clipped to
// [Cutoff, 2 − 10⁻⁶]: −(D−2)·log d − (D−3)/2 · log(1 − d²/4).
func (m *DistanceWeighted) LogInvQ(d float64) float64 {
	d = min(max(d, m.Cutoff), 2-1e-6)
	D := float64(m.Dim)
	return -(D-2)*math.Log(d) - (D-3)/2*math.Log(1-d*d/4)
}

// Weights returns the normalised sampling probabilities P(n|a) over the
// anchor's negatives negs, given its distance row.
func (m *DistanceWeighted) Weights(row []float32, negs []int) []float64 {
	w := make([]float64, len(negs))
	for pass := 0; pass < 2; pass++ {
		maxLog := math.Inf(-1)
		for i, n := range negs {
			w[i] = math.Inf(-1)
			if pass == 0 && m.UpperCutoff > 0 && float64(row[n]) > m.UpperCutoff {
				continue
			}
			w[i] = m.LogInvQ(float64(row[n]))
			maxLog = max(maxLog, w[i])
		}
		if math.IsInf(maxLog, -1) {
			continue // everything was cut: retry without the upper cut
		}
		sum := 0.0
		for i := range w {
			w[i] = math.Exp(w[i] - maxLog) // exp(−Inf) = 0 for cut negatives
			sum += w[i]
		}
		for i := range w {
			w[i] /= sum
		}
		return w
	}
	return w
}

// Mine implements Miner.
func (m *DistanceWeighted) Mine(dist []float32, labels []int, rng *rand.Rand) Triplets {
	var t Triplets
	if !ok(dist, labels, rng) || m.Dim < 1 {
		return t
	}
	split(labels).each(dist, func(a int, row []float32, pos, neg []int) {
		w := m.Weights(row, neg)
		u, n := rng.Float64(), neg[len(w)-1]
		for i, wi := range w {
			if u < wi {
				n = neg[i]
				break
			}
			u -= wi
		}
		t.add(a, pick(pos, rng), n)
	})
	return t
}
