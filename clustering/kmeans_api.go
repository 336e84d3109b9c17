package clustering

import "github.com/dmlbench/dmlbench/knn"

// KMeansOptions follow faiss's Clustering parameters.
type KMeansOptions struct {
	NIter int   // Lloyd iterations (faiss default 20)
	Seed  int64 // faiss's seed: subsample = rand_perm(n, Seed), init = rand_perm(nt, Seed+1); low 32 bits used
	// MinPointsPerCentroid / MaxPointsPerCentroid as in faiss: below min a
	// warning-level condition, above max·K points the training set is
	// subsampled (0 = no subsampling).
	MinPointsPerCentroid int
	MaxPointsPerCentroid int
	Threads              int
	// Searcher assigns points to centroids; nil means knn.Exact.
	Searcher knn.Searcher

	// fullPasses turns the pruned (Yinyang) assignment off: every pass
	// searches all K centroids (tests compare the two; same results).
	fullPasses bool
	// groupSize is the target number of centroids per Yinyang group
	// (0: 16, one kernel panel); tests lower it to get many groups from a
	// small K. It changes how much is pruned, never the result.
	groupSize int
}

// DefaultKMeansOptions are the strict convention's preset (KMeansPreset):
// 20 iterations, seed 1234, no subsampling, as Roth et al. 2020 call faiss.
func DefaultKMeansOptions() KMeansOptions {
	return kmeansPresets["strict"]
}

// KMeansResult is the outcome of one k-means run.
type KMeansResult struct {
	Assign    []int32    // cluster id of each input row
	Centroids knn.Matrix // K×D
	Objective float64    // sum of squared distances to the assigned centroid

	// Iterations is the number of Lloyd iterations run (0 when the training
	// set had exactly K points).
	Iterations int
	// TrainPoints is the number of points the centroids were trained on
	// (K·MaxPointsPerCentroid after subsampling, else all rows).
	TrainPoints int
	// Splits counts empty-cluster splits over all iterations.
	Splits int
	// History is the training objective (Σ float32 squared distances of the
	// training points, as faiss's iteration stats) before each update.
	History []float64
	// FullRowSearches counts rows searched against all K centroids (full
	// passes, and the first pass that initialises the bounds),
	// PartialRowSearches rows of pruned passes, PartialPairs the
	// (row, centroid) distances those pruned passes evaluated (built-in
	// kernel only; see KMeans).
	FullRowSearches, PartialRowSearches, PartialPairs int64
	// PairEvals has one entry per assignment pass (NIter training passes,
	// then the final pass over all rows): the (row, centroid) distances the
	// built-in kernel evaluated; a full pass costs rows·K. Empty with a
	// Searcher.
	PairEvals []int64
	// Warnings are faiss's non-fatal messages (too few points per centroid,
	// subsampling).
	Warnings []string
}
