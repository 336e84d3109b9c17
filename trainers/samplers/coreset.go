package samplers

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/knn"
)

func init() {
	Register(Info{Name: "gc", Summary: fmt.Sprintf("greedy coreset: from a random pool of %d samples, B/%d anchors chosen farthest-first "+
		"(each the pool sample farthest from the anchors so far), each completed to %d samples of its class "+
		"(Roth et al. 2020 Tab. 7–9, GC; embeds the training set every epoch)",
		DefaultPool, DefaultSamplesPerClass, DefaultSamplesPerClass), New: func() Sampler { return &Coreset{} }})
	Register(Info{Name: "gc-d2", Summary: "D²-coreset: as gc, but each further anchor is drawn with probability ∝ its squared " +
		"distance to the anchors so far (k-means++ seeding) instead of the farthest (embeds the training set every epoch)",
		New: func() Sampler { return &Coreset{D2: true} }})
}

// Coreset is the greedy-coreset sampler GC (Roth et al. 2020, Tab. 7–9) and, with
// D2, its D²-sampling variant. For each batch it draws a pool of Pool
// distinct random training samples (all when fewer) and picks
// A = ⌈batchSize/K⌉ anchors from it: the first uniformly at random, each
// further one the pool sample with the largest Euclidean embedding distance
// to its nearest anchor so far (ties: lowest pool position) — with D2, a
// pool sample drawn with probability ∝ that squared distance (uniform over
// the pool when all are 0). Each anchor is completed with K−1 further
// samples of its class (not yet in the batch while the class has any; the
// last anchor's class cut short to fit batchSize).
type Coreset struct {
	store
	D2      bool
	K, Pool int
}

// Name implements Sampler.
func (s *Coreset) Name() string {
	if s.D2 {
		return "gc-d2"
	}
	return "gc"
}

// Batches implements Sampler.
func (s *Coreset) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	if err := s.check(s.Name(), labels); err != nil {
		return nil, err
	}
	ci := newClassIndex(labels)
	k := orDefault(s.K, DefaultSamplesPerClass)
	nAnchors := (batchSize + k - 1) / k
	out := make([][]int, iters)
	for it := range out {
		pool := rng.Perm(len(labels))[:min(len(labels), orDefault(s.Pool, DefaultPool))]
		anchors := s.anchors(pool, nAnchors, rng)
		b := make([]int, 0, batchSize)
		in := map[int]bool{}
		for _, a := range anchors {
			in[a] = true
		}
		for _, a := range anchors {
			if len(b) == batchSize {
				break
			}
			b = append(b, a)
			b = ci.addClass(b, in, ci.of[labels[a]], k-1, batchSize, rng)
		}
		// More anchors than the pool holds (tiny sets): fill SPC-style.
		for len(b) < batchSize {
			b = ci.addClass(b, in, rng.Intn(len(ci.classes)), k, batchSize, rng)
		}
		out[it] = b
	}
	return out, nil
}

// anchors selects up to n pool entries (training indices) farthest-first
// (or by D² sampling).
func (s *Coreset) anchors(pool []int, n int, rng *rand.Rand) []int {
	n = min(n, len(pool))
	near := make([]float64, len(pool)) // squared distance to the nearest anchor
	for i := range near {
		near[i] = math.Inf(1)
	}
	chosen := make([]bool, len(pool))
	out := make([]int, 0, n)
	next := rng.Intn(len(pool))
	for len(out) < n {
		chosen[next] = true
		a := pool[next]
		out = append(out, a)
		ra := s.emb.Row(a)
		for i, p := range pool {
			near[i] = math.Min(near[i], knn.SquaredL2(ra, s.emb.Row(p)))
		}
		if len(out) == n {
			break
		}
		if s.D2 {
			next = drawD2(near, chosen, rng)
			continue
		}
		next = -1
		for i, d := range near {
			if !chosen[i] && (next < 0 || d > near[next]) {
				next = i
			}
		}
	}
	return out
}

// drawD2 draws i with probability near[i]/Σnear; chosen entries have
// near = 0 and are never drawn, and when every distance is 0 (duplicate
// embeddings) the draw is uniform over the entries not yet chosen.
func drawD2(near []float64, chosen []bool, rng *rand.Rand) int {
	var sum float64
	for _, d := range near {
		sum += d
	}
	if sum > 0 {
		u := rng.Float64() * sum
		last := -1
		for i, d := range near {
			if d > 0 && !chosen[i] {
				last = i
				if u -= d; u < 0 {
					return i
				}
			}
		}
		if last >= 0 { // rounding left u ≥ 0: the last positive entry
			return last
		}
	}
	var free []int
	for i, c := range chosen {
		if !c {
			free = append(free, i)
		}
	}
	return free[rng.Intn(len(free))]
}
