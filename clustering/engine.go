package clustering

import (
	"context"
	"fmt"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// CentroidAssigner runs the assignment step of KMeans on other hardware.
// NearestCentroids must return what the package's NearestCentroids
// returns: for every row of x the index of the nearest centroid in squared
// Euclidean distance (ties → lowest index) and the distance
// ‖x‖² + (‖c‖² − 2⟨x, c⟩) in float32, clamped at 0. An implementation
// that rounds exactly as the CPU kernels do (one FMA chain per pair, as
// knn/gpu's) gives KMeans the CPU's clusters bit for bit: the
// initialisation, the updates and the splits stay on the CPU.
type CentroidAssigner interface {
	Name() string
	NearestCentroids(ctx context.Context, x, centroids mat32.Matrix) ([]int32, []float32, error)
}

// KMeansEngine is the k-means behind the clustering metrics for one
// evaluation convention on one k-NN backend (KMeansOn).
type KMeansEngine struct {
	opt   KMeansOptions
	faiss bool
	desc  string
}

// KMeansOn is the k-means with options opt (a convention's KMeansPreset)
// that runs where the searcher s searches, so that --backend is one choice
// for both: faiss's own k-means for the faiss searchers, KMeans with its
// assignment step on s when s is also a CentroidAssigner (knn/gpu's
// Searcher), else KMeans with the CPU kernel (s nil included).
func KMeansOn(s knn.Searcher, opt KMeansOptions) *KMeansEngine {
	if isFaiss(s) {
		return &KMeansEngine{opt: opt, faiss: true, desc: "faiss k-means"}
	}
	if a, ok := s.(CentroidAssigner); ok {
		opt.Assigner = a
		return &KMeansEngine{opt: opt, desc: "k-means, assignment on " + a.Name()}
	}
	return &KMeansEngine{opt: opt, desc: "k-means, assignment on the CPU (" + KernelName() + ")"}
}

// String says which k-means runs and where its assignment step runs.
func (e *KMeansEngine) String() string { return e.desc }

// Options returns the KMeansOptions Run uses (before the seed is set).
func (e *KMeansEngine) Options() KMeansOptions { return e.opt }

// Run clusters x into k groups with the engine's settings and the given
// seed (faiss's 32-bit seed: a seed outside int32 is an error wrapping
// ErrBadInput, since KMeans would keep only its low 32 bits and disagree
// with faiss).
func (e *KMeansEngine) Run(ctx context.Context, x mat32.Matrix, k int, seed int64) (*KMeansResult, error) {
	if int64(int32(seed)) != seed {
		return nil, fmt.Errorf("%w: k-means seed %d does not fit faiss's 32-bit seed", ErrBadInput, seed)
	}
	o := e.opt
	o.Seed = seed
	if e.faiss {
		return FaissKMeans(ctx, x, k, o)
	}
	return KMeans(ctx, x, k, o)
}
