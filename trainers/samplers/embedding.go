package samplers

import (
	"fmt"
	"math"
	"math/rand"
	"sort"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/knn"
)

// Defaults of the embedding-aware samplers (Roth et al. 2020, Tab. 7–9: DDM, GC, FRD;
// rules as in Roth et al.'s reference code, with the choices below fixed and
// documented so a seed reproduces the batches).
const (
	// DefaultSamplesPerClass is K: DDM and FRD candidates are SPC-K batches
	// and every GC anchor is completed with K−1 samples of its class (the
	// reference code's default samples_per_class = 2).
	DefaultSamplesPerClass = 2
	// DefaultCandidates is the number of candidate batches DDM and FRD score
	// per emitted batch (the reference code's batchmatch ncomps).
	DefaultCandidates = 10
	// DefaultReference is the size of the seeded subsample of the training
	// set on which DDM and FRD estimate the data-set statistics (distance
	// histogram; mean and covariance), once per epoch, so the cost stays
	// bounded for large training sets.
	DefaultReference = 1024
	// DefaultBins is the number of bins of DDM's distance histograms.
	DefaultBins = 50
	// DefaultPool is the size of the random pool GC selects its coreset
	// from, drawn anew for every batch (the reference code's big batch).
	DefaultPool = 512
)

// store holds the training-set embeddings the trainer refreshed last.
type store struct {
	emb mat32.Matrix
}

// Refresh implements EmbeddingSampler: it keeps emb (not copied) for the
// next Batches calls.
func (s *store) Refresh(emb mat32.Matrix) error {
	if emb.Rows == 0 || emb.Cols == 0 || len(emb.Data) != emb.Rows*emb.Cols {
		return fmt.Errorf("samplers: embeddings %d×%d with %d values", emb.Rows, emb.Cols, len(emb.Data))
	}
	for i, v := range emb.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("samplers: non-finite embedding value in row %d", i/emb.Cols)
		}
	}
	s.emb = emb
	return nil
}

func (s *store) check(name string, labels []int32) error {
	if s.emb.Rows == 0 {
		return fmt.Errorf("samplers: %s needs the training-set embeddings (Refresh) before Batches", name)
	}
	if s.emb.Rows != len(labels) {
		return fmt.Errorf("samplers: %s has embeddings of %d rows for %d labels", name, s.emb.Rows, len(labels))
	}
	return nil
}

// classIndex groups the training indices by label (classes sorted).
type classIndex struct {
	classes []int32
	members [][]int
	of      map[int32]int // label → position in classes
}

func newClassIndex(labels []int32) *classIndex {
	ci := &classIndex{of: map[int32]int{}}
	for _, l := range labels {
		if _, ok := ci.of[l]; !ok {
			ci.of[l] = 0
			ci.classes = append(ci.classes, l)
		}
	}
	sort.Slice(ci.classes, func(a, b int) bool { return ci.classes[a] < ci.classes[b] })
	for i, c := range ci.classes {
		ci.of[c] = i
	}
	ci.members = make([][]int, len(ci.classes))
	for i, l := range labels {
		c := ci.of[l]
		ci.members[c] = append(ci.members[c], i)
	}
	return ci
}

// addClass appends up to k samples of class c to b that are not yet in it
// (uniformly without replacement; with replacement once the class is
// exhausted), never growing b past size.
func (ci *classIndex) addClass(b []int, in map[int]bool, c, k, size int, rng *rand.Rand) []int {
	m := ci.members[c]
	perm := rng.Perm(len(m))
	for _, p := range perm {
		if k == 0 || len(b) == size {
			return b
		}
		if !in[m[p]] {
			b = append(b, m[p])
			in[m[p]] = true
			k--
		}
	}
	for ; k > 0 && len(b) < size; k-- {
		b = append(b, m[rng.Intn(len(m))])
	}
	return b
}

// spcBatch draws one SPC-K batch: ⌈size/K⌉ distinct random classes (classes
// repeat only when there are fewer), K samples each, the last cut short.
func (ci *classIndex) spcBatch(k, size int, rng *rand.Rand) []int {
	b := make([]int, 0, size)
	in := map[int]bool{}
	for len(b) < size {
		for _, c := range rng.Perm(len(ci.classes)) {
			if len(b) == size {
				break
			}
			b = ci.addClass(b, in, c, k, size, rng)
		}
	}
	return b
}

// subsample returns min(n, N) distinct random row indices, sorted.
func subsample(N, n int, rng *rand.Rand) []int {
	if n >= N {
		idx := make([]int, N)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := rng.Perm(N)[:n]
	sort.Ints(idx)
	return idx
}

// pairDists returns the Euclidean distances of all pairs i<j of rows idx.
func pairDists(emb mat32.Matrix, idx []int) []float64 {
	out := make([]float64, 0, len(idx)*(len(idx)-1)/2)
	for a := range idx {
		ra := emb.Row(idx[a])
		for b := a + 1; b < len(idx); b++ {
			out = append(out, math.Sqrt(knn.SquaredL2(ra, emb.Row(idx[b]))))
		}
	}
	return out
}

// scoreParallel evaluates cost on every candidate on up to GOMAXPROCS
// goroutines and returns the index of the lowest cost, ties to the first.
// The candidates were drawn before and cost is pure, so the choice does not
// depend on scheduling.
func scoreParallel(cands [][]int, cost func([]int) float64) int {
	costs := make([]float64, len(cands))
	parallel.For(0, len(cands), func(i int) { costs[i] = cost(cands[i]) })
	best := 0
	for i, c := range costs {
		if c < costs[best] {
			best = i
		}
	}
	return best
}

// matchBatches is the candidate loop shared by DDM and FRD: for each batch,
// draw cands SPC-k candidates from rng and keep the one of lowest cost.
func matchBatches(labels []int32, batchSize, iters, k, cands int, rng *rand.Rand, cost func([]int) float64) [][]int {
	ci := newClassIndex(labels)
	out := make([][]int, iters)
	for it := range out {
		cs := make([][]int, cands)
		for j := range cs {
			cs[j] = ci.spcBatch(k, batchSize, rng)
		}
		out[it] = cs[scoreParallel(cs, cost)]
	}
	return out
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}
