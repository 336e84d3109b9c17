package clustering

import (
	"context"
	"fmt"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/registry"
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

// EngineOpener returns the k-means engine of one k-NN backend for the
// convention's options, or nil for KMeans with the CPU kernel (e.g. "auto"
// without a GPU).
type EngineOpener func(opt KMeansOptions) (*KMeansEngine, error)

// Engines maps k-NN backend names to their k-means, so that the clustering
// runs where the search runs; KMeansFor reads it. This package registers
// its faiss binding's (faiss.go, in a faiss build); the command layer
// registers other hardware's, e.g. a GPU assignment step (AssignerEngine),
// so that this package imports no backend.
var Engines = registry.New[EngineOpener]("k-means engine")

// KMeansEngine is the k-means behind the clustering metrics for one
// evaluation convention on one k-NN backend (KMeansFor).
type KMeansEngine struct {
	opt   KMeansOptions
	faiss bool
	desc  string
}

// AssignerEngine is KMeans with options opt and its assignment step on a.
func AssignerEngine(a CentroidAssigner, opt KMeansOptions) *KMeansEngine {
	opt.Assigner = a
	return &KMeansEngine{opt: opt, desc: "k-means, assignment on " + a.Name()}
}

// KMeansFor picks the k-means of the convention (KMeansPreset) for the k-NN
// backend named backend: the engine registered for it in Engines, else
// KMeans with the CPU kernel. threads is KMeansOptions.Threads (<= 0: all
// cores). An unknown convention is an error wrapping ErrBadInput; a backend
// whose engine cannot open (no GPU for "gpu") returns the opener's error.
func KMeansFor(backend, convention string, threads int) (*KMeansEngine, error) {
	opt, err := KMeansPreset(convention)
	if err != nil {
		return nil, err
	}
	opt.Threads = threads
	if open, ok := Engines.Lookup(backend); ok && open != nil {
		e, err := open(opt)
		if err != nil {
			return nil, fmt.Errorf("k-means on backend %q: %w", backend, err)
		}
		if e != nil {
			return e, nil
		}
	}
	return &KMeansEngine{opt: opt, desc: "k-means, assignment on the CPU (" + KernelName() + ")"}, nil
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
