package miners

import "math/rand"

// Random draws one valid triplet per anchor: a uniformly random positive and
// a uniformly random negative (Roth et al. 2020 §A.2 "Random Tuple Mining", Hu et al.
// 2014). Anchors without a positive or a negative in the batch are skipped.
type Random struct{}

func init() {
	Register(Info{Name: "random", Summary: "one uniformly random (positive, negative) per anchor (Roth et al. 2020 §A.2)",
		New: func() Miner { return Random{} }})
}

// Name implements Miner.
func (Random) Name() string { return "random" }

// Mine implements Miner.
func (Random) Mine(dist []float32, labels []int, rng *rand.Rand) Triplets {
	var t Triplets
	if !ok(dist, labels, rng) {
		return t
	}
	split(labels).each(dist, func(a int, row []float32, pos, neg []int) {
		t.add(a, pick(pos, rng), pick(neg, rng))
	})
	return t
}
