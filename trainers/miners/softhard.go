package miners

import "math/rand"

// Softhard is the soft-hard triplet mining of Roth & Brattoli (2019), Roth et al. 2020
// §A.2 eqs. 21–22. Per anchor a, with d⁺max the largest positive distance and
// d⁻min the smallest negative distance of a:
//
//	positive p uniform over {p : y_p = y_a, p ≠ a, d(a,p) > d⁻min}   (hard positives)
//	negative n uniform over {n : y_n ≠ y_a,        d(a,n) < d⁺max}   (hard negatives)
//
// Each set falls back to all positives / all negatives when empty (the
// reference implementation's rule). Anchors without positives or negatives
// are skipped.
type Softhard struct{}

func init() {
	Register(Info{Name: "softhard", Summary: "random hard positive (d > closest negative) and hard negative (d < farthest positive) (Roth et al. 2020 eqs. 21–22)",
		New: func() Miner { return Softhard{} }})
}

// Name implements Miner.
func (Softhard) Name() string { return "softhard" }

// Mine implements Miner.
func (Softhard) Mine(dist []float32, labels []int, rng *rand.Rand) Triplets {
	var t Triplets
	if !ok(dist, labels, rng) {
		return t
	}
	split(labels).each(dist, func(a int, row []float32, pos, neg []int) {
		maxPos, minNeg := row[pos[0]], row[neg[0]]
		for _, p := range pos {
			maxPos = max(maxPos, row[p])
		}
		for _, n := range neg {
			minNeg = min(minNeg, row[n])
		}
		hardP := filter(pos, func(p int) bool { return row[p] > minNeg })
		if len(hardP) == 0 {
			hardP = pos
		}
		hardN := filter(neg, func(n int) bool { return row[n] < maxPos })
		if len(hardN) == 0 {
			hardN = neg
		}
		t.add(a, pick(hardP, rng), pick(hardN, rng))
	})
	return t
}
