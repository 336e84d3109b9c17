package miners

import "math/rand"

// Softhard is the soft-hard triplet mining of Roth & Brattoli (2019), seed 000
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
	Register(Info{Name: "softhard", Summary: "random hard positive (d > closest negative) and hard negative (d < farthest positive) (seed 000 eqs. 21–22)",
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
	b := len(labels)
	g := split(labels)
	for a := range labels {
		if len(g.pos[a]) == 0 || len(g.neg[a]) == 0 {
			continue
		}
		row := dist[a*b : (a+1)*b]
		maxPos, minNeg := row[g.pos[a][0]], row[g.neg[a][0]]
		for _, p := range g.pos[a] {
			maxPos = max(maxPos, row[p])
		}
		for _, n := range g.neg[a] {
			minNeg = min(minNeg, row[n])
		}
		hardP := filter(g.pos[a], func(p int) bool { return row[p] > minNeg })
		if len(hardP) == 0 {
			hardP = g.pos[a]
		}
		hardN := filter(g.neg[a], func(n int) bool { return row[n] < maxPos })
		if len(hardN) == 0 {
			hardN = g.neg[a]
		}
		t.add(a, pick(hardP, rng), pick(hardN, rng))
	}
	return t
}
