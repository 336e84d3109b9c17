//go:build faiss

package clustering

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/knn/faissc"
)

// FaissCompiled reports whether FaissKMeans runs faiss (build tag faiss).
const FaissCompiled = true

// isFaiss reports whether s is one of knn's faiss searchers (knn.Faiss,
// knn.FaissGPU, which name themselves by their backend), whose k-means is
// faiss's own (KMeansOn).
func isFaiss(s knn.Searcher) bool {
	return s != nil && (s.Name() == knn.FaissName || s.Name() == knn.FaissGPUName)
}

// FaissKMeans clusters the rows of x into k groups with faiss's own k-means
// (faiss::Clustering, through knn/faissc). KMeans reproduces it in pure Go,
// random streams included (identical on the golden cases; see KMeans for
// the one exception, exact duplicate rows after a split); this one is
// faiss itself, for `eval --backend faiss`.
//
// The faiss Clustering is created with faiss_Clustering_new_with_params and
// explicit parameters: niter = opt.NIter, seed = opt.Seed, nredo = 1,
// verbose = 0, spherical = 0, max_points_per_centroid =
// opt.MaxPointsPerCentroid (0: no subsampling, passed as 2³¹−1). It trains
// with an IndexFlatL2 for the assignment step; then every row is assigned
// to its nearest final centroid with an IndexFlatL2 over the centroids and
// k = 1 (ties → lower centroid index), as Roth et al. 2020's evaluation
// code does. The settings of each convention come from KMeansPreset, the
// table KMeans's callers read too.
//
// faiss's min_points_per_centroid only makes it print a warning to stderr
// when n < k·min; FaissKMeans records that warning in Warnings instead (the
// same text as KMeans) and passes 0 so faiss stays silent. Subsampling is
// also recorded in Warnings.
//
// Result: Assign, Centroids (copied out of faiss), Objective = Σ_i
// ‖x_i − c_{a_i}‖² recomputed in float64 (the definition KMeans uses),
// Iterations = faiss iterations run (0 when the training set has exactly k
// rows: faiss copies them), TrainPoints, Splits (faiss's empty-cluster
// splits, summed) and History (faiss's per-iteration training objective).
//
// opt.Threads sets OpenMP's and OpenBLAS's threads (<= 0: GOMAXPROCS);
// opt.Searcher is not used (faiss assigns). The context is checked before
// the call; faiss itself cannot be interrupted. Bad input returns an error
// wrapping ErrBadInput: n == 0, D == 0, data length ≠ n·D, k <= 0, k > n,
// NIter < 0, negative points-per-centroid bounds, a seed outside int32,
// non-finite values. Errors raised inside faiss wrap knn.ErrFaiss.
func FaissKMeans(ctx context.Context, x mat32.Matrix, k int, opt KMeansOptions) (*KMeansResult, error) {
	n, d := x.Rows, x.Cols
	if err := checkKMeansInput(x, k, opt); err != nil {
		return nil, err
	}
	if opt.Seed < math.MinInt32 || opt.Seed > math.MaxInt32 {
		return nil, fmt.Errorf("%w: faiss k-means seed %d does not fit in 32 bits", ErrBadInput, opt.Seed)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &KMeansResult{TrainPoints: n}
	maxp := math.MaxInt32
	if opt.MaxPointsPerCentroid > 0 {
		maxp = min(opt.MaxPointsPerCentroid, math.MaxInt32)
		if n > k*opt.MaxPointsPerCentroid {
			res.TrainPoints = k * opt.MaxPointsPerCentroid
			res.Warnings = append(res.Warnings, fmt.Sprintf("sampling %d points out of %d for k-means training (max %d per centroid)", res.TrainPoints, n, opt.MaxPointsPerCentroid))
		}
	}
	if res.TrainPoints == n && opt.MinPointsPerCentroid > 0 && n < k*opt.MinPointsPerCentroid {
		res.Warnings = append(res.Warnings, fmt.Sprintf("clustering %d points to %d centroids: please provide at least %d training points", n, k, k*opt.MinPointsPerCentroid))
	}
	out, err := faissc.KMeans(x.Data, n, d, k, faissc.ClusteringParams{
		NIter:                opt.NIter,
		NRedo:                1,
		MinPointsPerCentroid: 0, // see above: only a stderr warning in faiss
		MaxPointsPerCentroid: maxp,
		Seed:                 int(opt.Seed),
	}, opt.Threads)
	if err != nil {
		if errors.Is(err, faissc.ErrInvalid) {
			return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
		return nil, err
	}
	res.Centroids = mat32.Matrix{Rows: k, Cols: d, Data: out.Centroids}
	res.Assign = make([]int32, n)
	for i, a := range out.Assign {
		if a < 0 || a >= int64(k) {
			return nil, fmt.Errorf("%w: faiss assigned row %d to centroid %d of %d", knn.ErrFaiss, i, a, k)
		}
		res.Assign[i] = int32(a)
	}
	res.Objective, res.LowPrecisionRows = finalObjective(x, res.Centroids, res.Assign)
	switch {
	case res.TrainPoints == k:
		// faiss copied the training rows and logged "one fake iteration".
	case out.Obj == nil: // faiss's stats layout not recognised
		res.Iterations = opt.NIter
	default:
		res.Iterations = len(out.Obj)
		res.History = out.Obj
		for _, s := range out.Splits {
			res.Splits += s
		}
	}
	return res, nil
}
