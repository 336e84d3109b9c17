package clustering

import (
	"context"
	"fmt"

	"github.com/dmlbench/dmlbench/internal/registry"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/mat32"
)

// CentroidAssigner runs the assignment step of KMeans on other hardware.
// NearestCentroids must return what the package's NearestCentroids
// returns: for every row of x the index of the nearest centroid in squared
// Euclidean distance (ties → lowest index) and the distance
// ‖x‖² + (‖c‖² − 2⟨x, c⟩) in float32, clamped at 0. An implementation
// that rounds exactly as the CPU kernel does (knn/gpu's, against the
// single-chain FMA kernel) gives KMeans the CPU's clusters bit for bit:
// the initialisation, the updates and the splits stay on the CPU.
type CentroidAssigner interface {
	Name() string
	NearestCentroids(ctx context.Context, x, centroids mat32.Matrix) ([]int32, []float32, error)
}

// AssignerOpener returns the assigner of a k-NN backend, or nil for the
// CPU kernel (e.g. "auto" without a GPU).
type AssignerOpener func() (CentroidAssigner, error)

// Assigners holds the k-means assignment of each k-NN backend that has one
// (by knn.Backends' names). A package that provides both, such as knn/gpu,
// registers itself here from its init, so that this package never imports
// it; KMeansFor reads it.
var Assigners = registry.New[AssignerOpener]("k-means assigner")

// KMeansEngine is the k-means behind the clustering metrics for one
// evaluation convention on one k-NN backend (KMeansFor).
type KMeansEngine struct {
	opt   KMeansOptions
	faiss bool
	desc  string
}

// KMeansFor picks the k-means of the convention (KMeansPreset) for the k-NN
// backend named backend, so that the clustering runs where the search runs:
//
//   - "faiss" and "faiss-gpu" in a build with faiss (FaissCompiled): faiss's
//     own k-means, FaissKMeans;
//   - a backend with a registered assigner ("gpu" and "auto" when knn/gpu
//     is linked in): KMeans with its assignment step on that assigner (for
//     "auto" without a GPU, the CPU kernel);
//   - any other ("", "exact", "bruteforce", ...): KMeans with the CPU
//     kernel.
//
// threads is KMeansOptions.Threads (<= 0: all cores). An unknown convention
// is an error wrapping ErrBadInput; a backend whose assigner cannot open
// (no GPU for "gpu") returns the opener's error.
func KMeansFor(backend, convention string, threads int) (*KMeansEngine, error) {
	opt, err := KMeansPreset(convention)
	if err != nil {
		return nil, err
	}
	opt.Threads = threads
	if (backend == knn.FaissName || backend == knn.FaissGPUName) && FaissCompiled {
		return &KMeansEngine{opt: opt, faiss: true, desc: "faiss k-means"}, nil
	}
	open, _ := Assigners.Lookup(backend)
	e := &KMeansEngine{opt: opt, desc: "k-means, assignment on the CPU (" + KernelName() + ")"}
	if open != nil {
		a, err := open()
		if err != nil {
			return nil, fmt.Errorf("k-means on backend %q: %w", backend, err)
		}
		if a != nil {
			e.opt.Assigner = a
			e.desc = "k-means, assignment on " + a.Name()
		}
	}
	return e, nil
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
