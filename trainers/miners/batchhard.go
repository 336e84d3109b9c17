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
	b := len(labels)
	g := split(labels)
	for a := range labels {
		if len(g.pos[a]) == 0 || len(g.neg[a]) == 0 {
			continue
		}
		row := dist[a*b : (a+1)*b]
		p, n := g.pos[a][0], g.neg[a][0]
		for _, j := range g.pos[a] {
			if row[j] > row[p] {
				p = j
			}
		}
		for _, j := range g.neg[a] {
			if row[j] < row[n] {
				n = j
			}
		}
		t.add(a, p, n)
	}
	return t
}
