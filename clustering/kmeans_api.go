package clustering

import (
	"fmt"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

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
	// Searcher, if set, assigns points to centroids through a k = 1 L2
	// search (its own distances and ties); nil means the built-in kernel.
	Searcher knn.Searcher
	// Assigner, if set (and Searcher is not), runs the built-in kernel's
	// assignment elsewhere, e.g. on a GPU (see CentroidAssigner): full
	// passes, no Yinyang pruning, the same results when it rounds as the
	// CPU kernel does.
	Assigner CentroidAssigner

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
	Assign    []int32      // cluster id of each input row
	Centroids mat32.Matrix // K×D
	Objective float64      // sum of squared distances to the assigned centroid

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
	// LowPrecisionRows counts the rows whose exact squared distance to
	// their centroid is positive but below 2⁻¹⁴·(‖x‖² + ‖c‖²): float32's
	// expansion ‖x‖² + ‖c‖² − 2⟨x, c⟩ kept fewer than 10 of its 24 bits
	// (see Float32Check).
	LowPrecisionRows int
	// RoundingRows counts the rows that some assignment pass (training
	// or final; with subsampling, rows of the sample and of the final pass
	// are counted apart) assigned within float32 rounding: another
	// centroid's exact squared distance exceeds the assigned one's by at
	// most the two distances' float32 error bounds for any summation
	// order (nearties.go), so that faiss, summing in its BLAS's order, may
	// have assigned them otherwise, and its run part from this one from
	// there. −1: not checked (assignment by a Searcher or an Assigner).
	RoundingRows int
	// TiedRows counts those of them whose two distances were within
	// 2⁻²³·((‖x‖ + ‖c_a‖)² + (‖x‖ + ‖c_j‖)²): a tie at the resolution of
	// the formula's last roundings, which any other association of its
	// terms (faiss's (‖x‖² + ‖c‖²) − 2⟨x, c⟩ against KMeans's ‖x‖² +
	// (‖c‖² − 2⟨x, c⟩)) decides afresh. −1: not checked.
	TiedRows int
	// RoundingPasses has one entry per assignment pass (the training
	// passes, then the final pass over all rows): the rows it assigned
	// within rounding (−1: not checked).
	RoundingPasses []int
	// TiedPairs, set when some row of the final pass's matrix (all rows;
	// without subsampling, the training rows too) was tied, holds for each
	// row the two centroids of its last tie, the one it was assigned and
	// the other (−1, −1: none): where faiss may have put it.
	TiedPairs [][2]int32
	// Warnings are faiss's non-fatal messages (too few points per centroid,
	// subsampling).
	Warnings []string
}

// Float32Check returns an error wrapping ErrFloat32Range when more than
// half of the rows are LowPrecisionRows: then the clusters were decided by
// float32 rounding rather than by the data. This happens when the rows'
// structure at the scale of the clusters is tiny against their norms
// (e.g. classes centred at ±500 with a spread of 10⁻³ and more clusters
// than classes) even where MeasureFloat32's global test passes: the
// classes are far apart, but inside each the distances are noise. The
// roth and pml evaluations, which keep the float32 assignment, report it
// as a warning; strict makes the assignment exact instead (Recheck64).
func (r *KMeansResult) Float32Check() error {
	n := len(r.Assign)
	if n == 0 || 2*r.LowPrecisionRows <= n {
		return nil
	}
	return fmt.Errorf("%w: float32 cancellation in k-means: for %d of %d rows the squared distance to the assigned centroid is below 2^-14·(‖x‖² + ‖c‖²), so float32 kept fewer than 10 of its 24 bits and the clusters are decided by rounding (the rows' structure is tiny against their norms)", ErrFloat32Range, r.LowPrecisionRows, n)
}
