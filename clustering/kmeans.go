package clustering

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/knn"
)

// noPruneForTests disables the pruned (Yinyang) assignment: every pass is a
// full pass (tests compare).
var noPruneForTests = false

// ErrBadInput is wrapped by every input-validation error of this package.
var ErrBadInput = errors.New("clustering: bad input")

// splitEPS is faiss's relative perturbation of a split centroid
// (Clustering.cpp, split_clusters: EPS = 1/1024).
const splitEPS = 1.0 / 1024

// KMeans clusters the rows of x into k groups with Lloyd's algorithm,
// following faiss 1.7.3 Clustering::train (Clustering.cpp) step by step:
//
//  1. Subsampling: if opt.MaxPointsPerCentroid > 0 and n > k·Max, the
//     training set is the first k·Max entries of rng.Perm(n) (faiss
//     subsample_training_set). Otherwise, if n < k·opt.MinPointsPerCentroid,
//     a warning is recorded (faiss prints one) and all points are used.
//  2. If the training set has exactly k points they are the centroids and no
//     iteration runs (faiss's nx == k corner case).
//  3. Initialisation: centroid j = training point perm[j], perm = rng.Perm(nt).
//  4. opt.NIter iterations of: assign every training point to its nearest
//     centroid (squared L2, ties → lowest index); recompute each centroid as
//     the mean of its points (float64 accumulation); split empty clusters.
//  5. Final assignment of ALL n rows to the final centroids (what the
//     evaluation code of seed 000 / METRICS.md does with IndexFlatL2), and
//     Objective = Σ_i ‖x_i − c_{a_i}‖² accumulated in float64.
//
// Empty-cluster split (faiss split_clusters): for each empty cluster ci, a
// donor cj is drawn with probability (h_cj − 1)/Σ(h − 1) over clusters with
// h_cj > 1 (h = current point count; faiss approximates the same law with a
// cyclic rejection scan), c_ci ← c_cj, then both are perturbed
// symmetrically: even dimensions c_ci·(1+ε), c_cj·(1−ε), odd dimensions the
// other way round, ε = 1/1024; the count is halved: h_ci = h_cj/2,
// h_cj −= h_ci. A split centroid whose components are all zero therefore
// stays equal to its donor, as in faiss.
//
// All randomness comes from rand.New(rand.NewSource(opt.Seed)) drawn in this
// order: subsample permutation (only when subsampling), init permutation,
// then one Float64 per split. faiss's mt19937 streams are not reproduced, so
// runs match faiss statistically, not bit for bit.
//
// Assignment uses opt.Searcher (k = 1, L2) when set. Otherwise it is the
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
// once converged), plus O(n·G) per pass for the bounds and O(NIter·nt·D)
// for the updates; memory O((n + k)·D + n·G).
//
// Errors (wrapping ErrBadInput): n == 0, D == 0, data length ≠ n·D, k <= 0,
// k > n, NIter < 0, MaxPointsPerCentroid < 0, non-finite values.
func KMeans(ctx context.Context, x knn.Matrix, k int, opt KMeansOptions) (*KMeansResult, error) {
	n, d := x.Rows, x.Cols
	if err := checkKMeansInput(x, k, opt); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(opt.Seed))
	res := &KMeansResult{}

	train := x
	subsampled := false
	if opt.MaxPointsPerCentroid > 0 && n > k*opt.MaxPointsPerCentroid {
		subsampled = true
		nt := k * opt.MaxPointsPerCentroid
		perm := rng.Perm(n)
		data := make([]float32, nt*d)
		for i := 0; i < nt; i++ {
			copy(data[i*d:(i+1)*d], x.Row(perm[i]))
		}
		train = knn.Matrix{Rows: nt, Cols: d, Data: data}
		res.Warnings = append(res.Warnings, fmt.Sprintf("sampling %d points out of %d for k-means training (max %d per centroid)", nt, n, opt.MaxPointsPerCentroid))
	} else if opt.MinPointsPerCentroid > 0 && n < k*opt.MinPointsPerCentroid {
		res.Warnings = append(res.Warnings, fmt.Sprintf("clustering %d points to %d centroids: please provide at least %d training points", n, k, k*opt.MinPointsPerCentroid))
	}
	nt := train.Rows
	res.TrainPoints = nt

	cent := make([]float32, k*d)
	la := &yinyangAssigner{opt: opt, noPrune: noPruneForTests}
	assign := make([]int32, nt)
	dist := make([]float32, nt)
	if nt == k {
		copy(cent, train.Data)
	} else {
		perm := rng.Perm(nt)
		for j := 0; j < k; j++ {
			copy(cent[j*d:(j+1)*d], train.Row(perm[j]))
		}
		sums := make([]float64, k*d)
		counts := make([]float64, k)
		for it := 0; it < opt.NIter; it++ {
			if err := la.assign(ctx, train, cent, k, assign, dist); err != nil {
				return nil, err
			}
			var obj float64
			for _, v := range dist {
				obj += float64(v)
			}
			res.History = append(res.History, obj)
			// Centroid update in float64.
			clear(sums)
			clear(counts)
			for i, a := range assign {
				counts[a]++
				s := sums[int(a)*d : int(a+1)*d]
				for t, v := range train.Row(i) {
					s[t] += float64(v)
				}
			}
			for j := 0; j < k; j++ {
				c := cent[j*d : (j+1)*d]
				if counts[j] == 0 {
					clear(c)
					continue
				}
				inv := 1 / counts[j]
				for t := range c {
					c[t] = float32(sums[j*d+t] * inv)
				}
			}
			res.Splits += splitEmpty(cent, counts, d, rng)
			res.Iterations++
		}
	}

	res.Centroids = knn.Matrix{Rows: k, Cols: d, Data: cent}
	if subsampled {
		// The training rows were a sample: a fresh (full) pass over all rows.
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
	res.Assign = assign
	res.FullRowSearches, res.PartialRowSearches, res.PartialPairs = la.fullRows, la.partRows, la.partPairs
	res.PairEvals = la.passEvals
	for i, a := range res.Assign {
		c := cent[int(a)*d : int(a+1)*d]
		var s float64
		for t, v := range x.Row(i) {
			e := float64(v) - float64(c[t])
			s += e * e
		}
		res.Objective += s
	}
	return res, nil
}

// splitEmpty implements faiss's empty-cluster split (see KMeans) and returns
// the number of clusters split.
func splitEmpty(cent []float32, counts []float64, d int, rng *rand.Rand) int {
	nsplit := 0
	for ci := range counts {
		if counts[ci] != 0 {
			continue
		}
		var total float64
		for _, h := range counts {
			if h > 1 {
				total += h - 1
			}
		}
		if total <= 0 {
			// No cluster has two points: cannot happen while n > k, keep
			// the (zero) centroid rather than loop.
			continue
		}
		r := rng.Float64() * total
		cj := -1
		for j, h := range counts {
			if h > 1 {
				cj = j
				r -= h - 1
				if r < 0 {
					break
				}
			}
		}
		ccopy := cent[ci*d : (ci+1)*d]
		cdon := cent[cj*d : (cj+1)*d]
		copy(ccopy, cdon)
		for t := 0; t < d; t++ {
			if t%2 == 0 {
				ccopy[t] *= 1 + splitEPS
				cdon[t] *= 1 - splitEPS
			} else {
				ccopy[t] *= 1 - splitEPS
				cdon[t] *= 1 + splitEPS
			}
		}
		counts[ci] = counts[cj] / 2
		counts[cj] -= counts[ci]
		nsplit++
	}
	return nsplit
}

func checkFinite(x knn.Matrix) error {
	for i, v := range x.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%w: non-finite value %v at row %d, column %d", ErrBadInput, v, i/x.Cols, i%x.Cols)
		}
	}
	return nil
}

// checkKMeansInput is the input validation KMeans and FaissKMeans share
// (errors wrap ErrBadInput).
func checkKMeansInput(x knn.Matrix, k int, opt KMeansOptions) error {
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
