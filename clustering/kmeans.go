package clustering

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// ErrBadInput is wrapped by every input-validation error of this package.
var ErrBadInput = errors.New("clustering: bad input")

// splitEPS is faiss's relative perturbation of a split centroid
// (Clustering.cpp, split_clusters: EPS = 1/1024).
const splitEPS = 1.0 / 1024

// initSeedStride is faiss's seed offset between redos
// (Clustering.cpp: rand_perm(perm, nx, seed + 1 + redo·15486557)); KMeans
// runs one redo, so the initial permutation is seeded with seed + 1.
const initSeedStride = 15486557

// KMeans clusters the rows of x into k groups with Lloyd's algorithm,
// reproducing faiss 1.7.3's Clustering::train (Clustering.cpp, one redo)
// step by step, random streams included (rng.go):
//
//  1. Subsampling: if opt.MaxPointsPerCentroid > 0 and n > k·Max, the
//     training set is rows perm[0 … k·Max−1] of perm =
//     rand_perm(n, seed) (faiss subsample_training_set), in that order.
//     Otherwise, if n < k·opt.MinPointsPerCentroid, faiss's warning
//     ("clustering n points to k centroids: please provide at least …") is
//     recorded in Warnings and all rows are used.
//  2. If the training set has exactly k rows, the centroids are the first
//     k rows of x (faiss copies its input, not the sample) and no
//     iteration runs.
//  3. Initialisation: centroid j = training row perm[j], j < k, with
//     perm = rand_perm(nt, seed + 1 + 0·15486557).
//  4. opt.NIter iterations of: assign every training row to its nearest
//     centroid (squared L2, ties → lowest index); the objective (History)
//     is the float32 sum of the nt squared distances in row order, as
//     faiss's `float obj`; each centroid becomes the float32 sum of its
//     rows, added in row order, times the float32 reciprocal of its
//     float32 count (faiss compute_centroids); then empty clusters are
//     split (below).
//  5. Final assignment of ALL n rows to the final centroids (what the
//     evaluation code of Roth et al. 2020 and pytorch-metric-learning does
//     with an IndexFlatL2 search, k = 1), and Objective =
//     Σ_i ‖x_i − c_{a_i}‖² accumulated in float64.
//
// rand_perm(n, s) is faiss's Fisher–Yates over RandomGenerator(s) (C++
// std::mt19937 seeded with s mod 2³², rand_int(m) = mt() mod m); only the
// low 32 bits of opt.Seed matter, as in faiss.
//
// Empty-cluster split (faiss split_clusters), run after every update with a
// fresh RandomGenerator(1234): for each empty cluster ci in index order, a
// donor cj is found by scanning cj = 0, 1, …, cyclically modulo k, drawing
// r = rand_float() at each step and stopping at the first cj with
// r < p_cj = (h_cj − 1)/(nt − k) in float32 (h = float32 point counts, as
// updated by earlier splits); c_ci ← c_cj, then both are perturbed
// symmetrically: even dimensions c_ci·(1+ε), c_cj·(1−ε), odd dimensions the
// other way round, ε = 1/1024; and h_ci = h_cj/2, h_cj −= h_ci. A split
// centroid whose components are all zero therefore stays equal to its
// donor, as in faiss.
//
// What can still differ from faiss: both compute squared distances as
// ‖x‖² + ‖c‖² − 2⟨x, c⟩ in float32, but faiss takes ⟨x, c⟩ from BLAS
// (sgemm: its own blocking and summation order, which OpenBLAS chooses by
// CPU) and associates the sum otherwise, where KMeans takes it from its
// kernel (fused multiply-adds over d in order; see NearestCentroids), so
// a row whose two nearest centroids are within rounding of each other may
// go to the other one, and the runs part from there. Every pass is
// checked for such rows (nearties.go: exact distances against a rigorous
// bound on float32's error in any order): RoundingRows, TiedRows and
// RoundingPasses say how many there were and where. On the golden cases
// (testdata/faiss_kmeans_golden.json, from faiss 1.7.3: well-separated,
// noisy, subsampled, with splits) no row is tied, every initial row and
// split is faiss's and at least 99.9 % of the final assignments are.
// Duplicate rows are not safe: initial centroids drawn from copies of one
// row are bitwise equal, faiss's sgemm need not give them equal values,
// and faiss sends some rows to the higher index where KMeans sends all to
// the lower (testdata/faiss_duplicates.json; TestKMeansDuplicateTies pins
// a case whose runs then part).
//
// Assignment uses opt.Searcher (k = 1, L2) when set, else opt.Assigner
// (full passes of NearestCentroids' arithmetic on other hardware, e.g. the
// GPU; see CentroidAssigner) when set. Otherwise it is the
// exact blocked kernel of NearestCentroids pruned by Yinyang k-means
// (Ding et al., "Yinyang K-Means: A Drop-In Replacement of the Classic
// K-Means with Consistent Speedup", ICML 2015; see yinyang.go): the
// centroids are split once into G groups (a balanced bisection tree of the
// initial centroids, G = min(⌈K/16⌉, 256, 2²⁴/n), so that the n·G float32
// lower bounds take at most 64 MiB), every point keeps a lower bound on its
// distance to each group's centroids other than its own, lowered after each
// update by the group's largest centroid drift, and a group (or a panel of
// 16 centroids inside it) is searched only if its bound does not exceed the
// point's best distance so far plus a rigorous float32 rounding margin.
// Every candidate kept is evaluated with the same float32 arithmetic as the
// full pass and the lexicographic (distance, index) minimum is taken, so
// the assignments, distances, History, centroids and Objective are
// bit-identical to full passes for every seed, and independent of
// opt.Threads. The first training pass (which initialises the bounds) is a
// full one; with subsampling the final pass over all n rows is a full one.
// A pass whose centroids are bitwise those of the previous pass (Lloyd's
// fixed point) returns the previous assignment without any work.
//
// Cost: at most (NIter·nt + n)·k·D multiply-adds for the assignments; the
// pruning leaves a fraction of it (on Stanford-Online-Products-shaped data,
// n = 60 500, K = 12 100, D = 128: ≈ 14 % over the 21 passes — the first
// two are full, the third to fifth 17–37 %, later ones under 6 % and none
// once converged), plus O(n·G) per pass for the bounds, O(NIter·nt·D) for
// the updates and O(n) for the permutations; memory O((n + k)·D + n·G).
//
// Errors (wrapping ErrBadInput): n == 0, D == 0, data length ≠ n·D, k <= 0,
// k > n, NIter < 0, MaxPointsPerCentroid < 0, non-finite values.
func KMeans(ctx context.Context, x mat32.Matrix, k int, opt KMeansOptions) (*KMeansResult, error) {
	n, d := x.Rows, x.Cols
	if err := checkKMeansInput(x, k, opt); err != nil {
		return nil, err
	}
	res := &KMeansResult{}

	train := x
	subsampled := false
	if opt.MaxPointsPerCentroid > 0 && n > k*opt.MaxPointsPerCentroid {
		subsampled = true
		train = subsample(x, k*opt.MaxPointsPerCentroid, opt.Seed)
		res.Warnings = append(res.Warnings, fmt.Sprintf("sampling %d points out of %d for k-means training (max %d per centroid)", train.Rows, n, opt.MaxPointsPerCentroid))
	} else if opt.MinPointsPerCentroid > 0 && n < k*opt.MinPointsPerCentroid {
		res.Warnings = append(res.Warnings, fmt.Sprintf("clustering %d points to %d centroids: please provide at least %d training points", n, k, k*opt.MinPointsPerCentroid))
	}
	nt := train.Rows
	res.TrainPoints = nt

	cent := make([]float32, k*d)
	la := &yinyangAssigner{opt: opt, noPrune: opt.fullPasses}
	ties := &nearTies{}
	assign := make([]int32, nt)
	dist := make([]float32, nt)
	if nt == k {
		copy(cent, x.Data[:k*d])
	} else {
		initCentroids(cent, train, k, opt.Seed)
		counts := make([]float32, k)
		for it := 0; it < opt.NIter; it++ {
			if err := la.assign(ctx, train, cent, k, assign, dist); err != nil {
				return nil, err
			}
			if err := ties.note(ctx, train, cent, k, assign, dist, la, opt); err != nil {
				return nil, err
			}
			var obj float32
			for _, v := range dist {
				obj += v
			}
			res.History = append(res.History, float64(obj))
			updateCentroids(cent, counts, train, assign)
			res.Splits += splitEmpty(cent, counts, d, nt)
			res.Iterations++
		}
	}

	res.Centroids = mat32.Matrix{Rows: k, Cols: d, Data: cent}
	if subsampled {
		// The training rows were a sample: their bounds do not apply, and a
		// single pass needs none (full pass).
		fresh := &yinyangAssigner{opt: opt, noPrune: true}
		fresh.fullRows, fresh.partRows, fresh.partPairs = la.fullRows, la.partRows, la.partPairs
		fresh.passEvals = la.passEvals
		la = fresh
		assign = make([]int32, n)
		dist = make([]float32, n)
	}
	if err := la.assign(ctx, x, cent, k, assign, dist); err != nil {
		return nil, err
	}
	if err := ties.note(ctx, x, cent, k, assign, dist, la, opt); err != nil {
		return nil, err
	}
	ties.report(res)
	res.Assign = assign
	res.FullRowSearches, res.PartialRowSearches, res.PartialPairs = la.fullRows, la.partRows, la.partPairs
	res.PairEvals = la.passEvals
	res.Objective, res.LowPrecisionRows = finalObjective(x, res.Centroids, res.Assign)
	return res, nil
}

// finalObjective returns Σ_i ‖x_i − c_{a_i}‖² accumulated in float64 in
// row order (KMeansResult.Objective) and the number of rows whose exact
// squared distance s_i to their centroid is positive but below
// 2⁻¹⁴·(‖x_i‖² + ‖c_{a_i}‖²) (KMeansResult.LowPrecisionRows): the float32
// expansion rounds each of its terms with a relative error of 2⁻²⁴, so
// such a distance kept fewer than 10 of its 24 bits and its comparison
// with the distances to other centroids is close to rounding noise (the
// per-row form of MeasureFloat32's cancellation test).
func finalObjective(x, cent mat32.Matrix, assign []int32) (float64, int) {
	var obj float64
	low := 0
	cnorm := make([]float64, cent.Rows)
	for j := range cnorm {
		for _, v := range cent.Row(j) {
			cnorm[j] += float64(v) * float64(v)
		}
	}
	for i, a := range assign {
		c := cent.Row(int(a))
		var s, xn float64
		for t, v := range x.Row(i) {
			e := float64(v) - float64(c[t])
			s += e * e
			xn += float64(v) * float64(v)
		}
		obj += s
		if s > 0 && s*(1<<14) < xn+cnorm[a] {
			low++
		}
	}
	return obj, low
}

// subsample returns rows perm[0 … m−1] of x, perm = rand_perm(n, seed)
// (faiss subsample_training_set).
func subsample(x mat32.Matrix, m int, seed int64) mat32.Matrix {
	d := x.Cols
	perm := faissRandPerm(x.Rows, seed)
	data := make([]float32, m*d)
	for i := 0; i < m; i++ {
		copy(data[i*d:(i+1)*d], x.Row(int(perm[i])))
	}
	return mat32.Matrix{Rows: m, Cols: d, Data: data}
}

// initCentroids sets centroid j to training row perm[j], j < k, with
// perm = rand_perm(nt, seed + 1) (faiss's first redo).
func initCentroids(cent []float32, train mat32.Matrix, k int, seed int64) {
	d := train.Cols
	for j, p := range initPerm(train.Rows, k, seed) {
		copy(cent[j*d:(j+1)*d], train.Row(int(p)))
	}
}

// initPerm returns the training-row indices of the k initial centroids:
// the first k of rand_perm(nt, seed + 1 + redo·15486557) with redo = 0.
func initPerm(nt, k int, seed int64) []int32 {
	return faissRandPerm(nt, seed+1+0*initSeedStride)[:k]
}

// updateCentroids is faiss's compute_centroids without weights: each
// centroid becomes the float32 sum of its rows in row order times
// float32(1/count); counts (float32, as faiss's hassign) receives the
// cluster sizes. Empty clusters are left at zero for splitEmpty.
func updateCentroids(cent, counts []float32, train mat32.Matrix, assign []int32) {
	d := train.Cols
	clear(cent)
	clear(counts)
	for i, a := range assign {
		counts[a]++
		c := cent[int(a)*d : int(a+1)*d]
		for t, v := range train.Row(i) {
			c[t] += v
		}
	}
	for j, h := range counts {
		if h == 0 {
			continue
		}
		norm := 1 / h
		c := cent[j*d : (j+1)*d]
		for t := range c {
			c[t] *= norm
		}
	}
}

// splitEmpty is faiss's split_clusters (see KMeans) for a training set of
// nt rows; it returns the number of clusters split.
func splitEmpty(cent, counts []float32, d, nt int) int {
	k := len(counts)
	nsplit := 0
	var rng faissRNG // created at the first empty cluster, as faiss's
	for ci := range counts {
		if counts[ci] != 0 {
			continue
		}
		if rng.mt == nil {
			rng = newFaissRNG(1234)
		}
		// Some cluster has h > 1 while nt > k (the counts sum to nt), so
		// the scan ends; stop anyway if none does rather than loop.
		donor := false
		for _, h := range counts {
			if h > 1 {
				donor = true
				break
			}
		}
		if !donor {
			continue
		}
		denom := float64(float32(nt - k))
		cj := 0
		for ; ; cj = (cj + 1) % k {
			p := float32((float64(counts[cj]) - 1) / denom)
			if rng.float32() < p {
				break
			}
		}
		ccopy := cent[ci*d : (ci+1)*d]
		cdon := cent[cj*d : (cj+1)*d]
		copy(ccopy, cdon)
		for t := 0; t < d; t++ {
			if t%2 == 0 {
				ccopy[t] = float32(float64(ccopy[t]) * (1 + splitEPS))
				cdon[t] = float32(float64(cdon[t]) * (1 - splitEPS))
			} else {
				ccopy[t] = float32(float64(ccopy[t]) * (1 - splitEPS))
				cdon[t] = float32(float64(cdon[t]) * (1 + splitEPS))
			}
		}
		counts[ci] = counts[cj] / 2
		counts[cj] -= counts[ci]
		nsplit++
	}
	return nsplit
}

func checkFinite(x mat32.Matrix) error {
	for i, v := range x.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%w: non-finite value %v at row %d, column %d", ErrBadInput, v, i/x.Cols, i%x.Cols)
		}
	}
	return nil
}

// checkKMeansInput is the input validation KMeans and FaissKMeans share
// (errors wrap ErrBadInput).
func checkKMeansInput(x mat32.Matrix, k int, opt KMeansOptions) error {
	n, d := x.Rows, x.Cols
	switch {
	case n < 0 || d < 0 || len(x.Data) != n*d:
		return fmt.Errorf("%w: k-means data %d×%d has %d values, want %d", ErrBadInput, n, d, len(x.Data), n*d)
	case n == 0:
		return fmt.Errorf("%w: k-means on an empty set", ErrBadInput)
	case d == 0:
		return fmt.Errorf("%w: k-means on zero-dimensional rows", ErrBadInput)
	case k <= 0:
		return fmt.Errorf("%w: k-means needs k > 0, got %d", ErrBadInput, k)
	case k > n:
		return fmt.Errorf("%w: k-means with k = %d clusters needs at least k points, got %d", ErrBadInput, k, n)
	case opt.NIter < 0:
		return fmt.Errorf("%w: k-means NIter = %d must be >= 0", ErrBadInput, opt.NIter)
	case opt.MaxPointsPerCentroid < 0 || opt.MinPointsPerCentroid < 0:
		return fmt.Errorf("%w: k-means points-per-centroid bounds must be >= 0", ErrBadInput)
	}
	return checkFinite(x)
}
