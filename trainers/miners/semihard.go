package miners

import "math/rand"

// Semihard is FaceNet's semi-hard negative mining (Schroff et al. 2015; seed
// 000 §A.2 eq. 20). Per anchor a, a positive p is drawn uniformly; the
// negative is drawn uniformly from the semi-hard set
//
//	{n : y_n ≠ y_a, d(a,p) < d(a,n) < d(a,p) + Margin}
//
// (negatives farther than the positive but still inside the margin, so the
// triplet has a non-zero loss without being a "hardest", noisy negative). If
// the set is empty, a uniformly random negative is used, as in Roth et al.'s
// reference implementation. Anchors without positives or negatives are skipped.
type Semihard struct {
	Margin float64 // γ of the triplet loss; default 0.2 (Roth et al. 2020 §A.1)
}

func init() {
	Register(Info{Name: "semihard", Summary: "random positive, random negative with d(a,p) < d(a,n) < d(a,p)+γ (FaceNet; Roth et al. 2020 eq. 20)",
		New: func() Miner { return &Semihard{Margin: 0.2} }})
}

// Name implements Miner.
func (*Semihard) Name() string { return "semihard" }

// SetMargin implements MarginSetter.
func (s *Semihard) SetMargin(m float64) { s.Margin = m }

// Mine implements Miner.
func (s *Semihard) Mine(dist []float32, labels []int, rng *rand.Rand) Triplets {
	var t Triplets
	if !ok(dist, labels, rng) {
		return t
	}
	split(labels).each(dist, func(a int, row []float32, pos, neg []int) {
		p := pick(pos, rng)
		dap := float64(row[p])
		semi := filter(neg, func(n int) bool {
			d := float64(row[n])
			return d > dap && d < dap+s.Margin
		})
		if len(semi) == 0 {
			semi = neg
		}
		t.add(a, p, pick(semi, rng))
	})
	return t
}
