package miners

import "math/rand"

// BatchHard selects, per anchor, the hardest positive (largest d(a,p)) and the
// hardest negative (smallest d(a,n)) in the batch (Hermans et al. 2017,
// "batch hard"). Deterministic: ties go to the lower index; rng is unused.
// Anchors without positives or negatives are skipped.
type BatchHard struct{}

func init() {
	Register(Info{Name: "batchhard", Summary: "hardest positive (max d) and hardest negative (min d) per anchor (Hermans et al. 2017)",
		New: func() Miner { return BatchHard{} }})
}

// Name implements Miner.
func (BatchHard) Name() string { return "batchhard" }

// Mine implements Miner. rng may be nil.
func (BatchHard) Mine(dist []float32, labels []int, rng *rand.Rand) Triplets {
	var t Triplets
	if checkShape(dist, labels) != nil {
		return t
	}
	split(labels).each(dist, func(a int, row []float32, pos, neg []int) {
		p, n := pos[0], neg[0]
		for _, j := range pos {
			if row[j] > row[p] {
				p = j
			}
		}
		for _, j := range neg {
			if row[j] < row[n] {
				n = j
			}
		}
		t.add(a, p, n)
	})
	return t
}
