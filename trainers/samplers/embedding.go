package samplers

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dmlbench/dmlbench/knn"
)

// Defaults of the embedding-aware samplers (seed 000 Tab. 7–9: DDM, GC, FRD;
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

func init() {
	Register(Info{Name: "ddm", Summary: fmt.Sprintf("distance-distribution matching: of %d random SPC-%d candidate batches, the one whose "+
		"pairwise-distance histogram (%d bins over the reference range) is closest in 1-D Wasserstein distance to that of a seeded "+
		"%d-sample reference of the training set (seed 000 Tab. 7–9, DDM; embeds the training set every epoch)",
		DefaultCandidates, DefaultSamplesPerClass, DefaultBins, DefaultReference), New: func() Sampler { return &DDM{} }})
	Register(Info{Name: "frd", Summary: fmt.Sprintf("Fréchet-distance batch matching: of %d random SPC-%d candidate batches, the one whose "+
		"embedding mean and covariance are closest in Fréchet distance to those of a seeded %d-sample reference of the training set "+
		"(seed 000 Tab. 7–9, FRD; embeds the training set every epoch)",
		DefaultCandidates, DefaultSamplesPerClass, DefaultReference), New: func() Sampler { return &FRD{} }})
	Register(Info{Name: "gc", Summary: fmt.Sprintf("greedy coreset: from a random pool of %d samples, B/%d anchors chosen farthest-first "+
		"(each the pool sample farthest from the anchors so far), each completed to %d samples of its class "+
		"(seed 000 Tab. 7–9, GC; embeds the training set every epoch)",
		DefaultPool, DefaultSamplesPerClass, DefaultSamplesPerClass), New: func() Sampler { return &Coreset{} }})
	Register(Info{Name: "gc-d2", Summary: "D²-coreset: as gc, but each further anchor is drawn with probability ∝ its squared " +
		"distance to the anchors so far (k-means++ seeding) instead of the farthest (embeds the training set every epoch)",
		New: func() Sampler { return &Coreset{D2: true} }})
}

// store holds the training-set embeddings the trainer refreshed last.
type store struct {
	emb knn.Matrix
}

// Refresh implements EmbeddingSampler: it keeps emb (not copied) for the
// next Batches calls.
func (s *store) Refresh(emb knn.Matrix) error {
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

func sqDist(a, b []float32) float64 {
	var s float64
	for t := range a {
		d := float64(a[t]) - float64(b[t])
		s += d * d
	}
	return s
}

// pairDists returns the Euclidean distances of all pairs i<j of rows idx.
func pairDists(emb knn.Matrix, idx []int) []float64 {
	out := make([]float64, 0, len(idx)*(len(idx)-1)/2)
	for a := range idx {
		ra := emb.Row(idx[a])
		for b := a + 1; b < len(idx); b++ {
			out = append(out, math.Sqrt(sqDist(ra, emb.Row(idx[b]))))
		}
	}
	return out
}

// scoreParallel evaluates cost on every candidate concurrently and returns
// the index of the lowest cost, ties to the first. The candidates were drawn
// before and cost is pure, so the choice does not depend on scheduling.
func scoreParallel(cands [][]int, cost func([]int) float64) int {
	costs := make([]float64, len(cands))
	var wg sync.WaitGroup
	for i := range cands {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			costs[i] = cost(cands[i])
		}(i)
	}
	wg.Wait()
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

// DDM is distance-distribution matching (seed 000 Tab. 7–9). Once per epoch
// (per Batches call) it draws a seeded reference subsample of Reference
// training samples and histograms their pairwise Euclidean embedding
// distances into Bins equal bins over [min, max] of those distances,
// normalised to sum 1 (h_ref). For each batch it draws Candidates SPC-K
// batches and returns the one minimising the 1-D Wasserstein distance
//
//	W₁(h_ref, h_c) = w · Σ_b |H_ref(b) − H_c(b)|,  H = cumulative histogram, w = bin width,
//
// where h_c histograms the candidate's pairwise distances on the same bins
// (distances outside the reference range count in the end bins). Ties go
// to the first candidate. Zero fields take the Default* values.
type DDM struct {
	store
	K, Candidates, Reference, Bins int
}

// Name implements Sampler.
func (*DDM) Name() string { return "ddm" }

// Batches implements Sampler.
func (s *DDM) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	if err := s.check("ddm", labels); err != nil {
		return nil, err
	}
	ref := subsample(len(labels), orDefault(s.Reference, DefaultReference), rng)
	h := newDistHist(pairDists(s.emb, ref), orDefault(s.Bins, DefaultBins))
	return matchBatches(labels, batchSize, iters, orDefault(s.K, DefaultSamplesPerClass), orDefault(s.Candidates, DefaultCandidates), rng,
		func(b []int) float64 { return h.w1(pairDists(s.emb, b)) }), nil
}

// distHist is a normalised histogram of distances with equal bins over
// [lo, hi].
type distHist struct {
	lo, width float64
	cum       []float64 // cumulative, last = 1
}

func newDistHist(d []float64, bins int) *distHist {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range d {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if len(d) == 0 {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1e-12 // all distances equal: one degenerate range
	}
	h := &distHist{lo: lo, width: (hi - lo) / float64(bins)}
	h.cum = h.cumulative(d, bins)
	return h
}

func (h *distHist) cumulative(d []float64, bins int) []float64 {
	c := make([]float64, bins)
	for _, v := range d {
		b := int((v - h.lo) / h.width)
		c[min(max(b, 0), bins-1)]++
	}
	var s float64
	for i := range c {
		s += c[i]
		c[i] = s
	}
	for i := range c {
		if s > 0 {
			c[i] /= s
		}
	}
	return c
}

// w1 is the 1-D Wasserstein distance between h and the histogram of d on
// h's bins.
func (h *distHist) w1(d []float64) float64 {
	c := h.cumulative(d, len(h.cum))
	var s float64
	for i := range c {
		s += math.Abs(c[i] - h.cum[i])
	}
	return s * h.width
}

// FRD is Fréchet-distance batch matching (seed 000 Tab. 7–9). Once per
// epoch it estimates the mean μ_r and covariance Σ_r (denominator n−1) of
// the embeddings of a seeded reference subsample of Reference training
// samples. For each batch it draws Candidates SPC-K batches and returns the
// one minimising the Fréchet distance of the Gaussians fitted to it,
//
//	FD = ‖μ_r − μ_c‖² + tr Σ_r + tr Σ_c − 2 tr (Σ_r^{1/2} Σ_c Σ_r^{1/2})^{1/2},
//
// the last trace computed as Σ √max(λ, 0) over the eigenvalues λ of the
// symmetric Σ_r^{1/2} Σ_c Σ_r^{1/2} (equal to tr (Σ_r Σ_c)^{1/2}; gonum
// EigenSym, no complex square root needed). Ties go to the first candidate.
type FRD struct {
	store
	K, Candidates, Reference int
}

// Name implements Sampler.
func (*FRD) Name() string { return "frd" }

// Batches implements Sampler.
func (s *FRD) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	if err := s.check("frd", labels); err != nil {
		return nil, err
	}
	ref := subsample(len(labels), orDefault(s.Reference, DefaultReference), rng)
	g, err := newGaussRef(s.emb, ref)
	if err != nil {
		return nil, err
	}
	return matchBatches(labels, batchSize, iters, orDefault(s.K, DefaultSamplesPerClass), orDefault(s.Candidates, DefaultCandidates), rng,
		func(b []int) float64 { return g.frechet(s.emb, b) }), nil
}

// gaussRef is the reference Gaussian of FRD with Σ_r^{1/2} precomputed.
type gaussRef struct {
	mu    []float64
	trCov float64
	sqrt  *mat.SymDense // Σ_r^{1/2}
}

// meanCov returns the mean and covariance (denominator n−1; 0 for n = 1)
// of rows idx.
func meanCov(emb knn.Matrix, idx []int) ([]float64, *mat.SymDense) {
	D := emb.Cols
	mu := make([]float64, D)
	for _, i := range idx {
		for t, v := range emb.Row(i) {
			mu[t] += float64(v)
		}
	}
	for t := range mu {
		mu[t] /= float64(len(idx))
	}
	x := mat.NewDense(len(idx), D, nil)
	for r, i := range idx {
		for t, v := range emb.Row(i) {
			x.Set(r, t, float64(v)-mu[t])
		}
	}
	cov := mat.NewSymDense(D, nil)
	cov.SymOuterK(1/math.Max(1, float64(len(idx)-1)), x.T())
	return mu, cov
}

func newGaussRef(emb knn.Matrix, idx []int) (*gaussRef, error) {
	return gaussFrom(meanCov(emb, idx))
}

func gaussFrom(mu []float64, cov *mat.SymDense) (*gaussRef, error) {
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("samplers: frd: eigen-decomposition of the reference covariance failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	D := len(mu)
	// Σ^{1/2} = V diag(√max(λ,0)) Vᵀ = WWᵀ with W = V diag(max(λ,0)^{1/4})
	// (negative λ are rounding noise).
	vs := mat.DenseCopyOf(&vecs)
	for j, l := range vals {
		r := math.Sqrt(math.Sqrt(math.Max(l, 0)))
		for i := 0; i < D; i++ {
			vs.Set(i, j, vs.At(i, j)*r)
		}
	}
	sq := mat.NewSymDense(D, nil)
	sq.SymOuterK(1, vs)
	return &gaussRef{mu: mu, trCov: mat.Trace(cov), sqrt: sq}, nil
}

// frechet is the Fréchet distance between the reference and the Gaussian
// fitted to rows idx.
func (g *gaussRef) frechet(emb knn.Matrix, idx []int) float64 {
	return g.frechetTo(meanCov(emb, idx))
}

// frechetTo is the Fréchet distance between the reference and N(mu, cov).
func (g *gaussRef) frechetTo(mu []float64, cov *mat.SymDense) float64 {
	var d2 float64
	for t := range mu {
		d := mu[t] - g.mu[t]
		d2 += d * d
	}
	var tmp, m mat.Dense
	tmp.Mul(g.sqrt, cov)
	m.Mul(&tmp, g.sqrt)
	D := len(mu)
	sym := mat.NewSymDense(D, nil)
	for i := 0; i < D; i++ {
		for j := i; j < D; j++ {
			sym.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2) // symmetric up to rounding
		}
	}
	var eig mat.EigenSym
	var trSqrt float64
	if eig.Factorize(sym, false) {
		for _, l := range eig.Values(nil) {
			trSqrt += math.Sqrt(math.Max(l, 0))
		}
	} else {
		return math.Inf(1) // never chosen unless every candidate fails
	}
	return d2 + g.trCov + mat.Trace(cov) - 2*trSqrt
}

// Coreset is the greedy-coreset sampler GC (seed 000 Tab. 7–9) and, with
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
			near[i] = math.Min(near[i], sqDist(ra, s.emb.Row(p)))
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
