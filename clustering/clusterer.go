package clustering

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"

	"github.com/dmlbench/dmlbench/internal/registry"
)

// Noise is the label density-based methods (DBSCAN, OPTICS) give to points
// that belong to no cluster.
const Noise int32 = -1

// Clusterer partitions the rows of a matrix. Labels are dense cluster ids
// 0..C−1 numbered in order of first appearance (row order), or Noise (−1)
// for rows a density-based method leaves unclustered. Every implementation
// is deterministic for fixed Params.
type Clusterer interface {
	// Name is the registry name ("kmeans", "ward", ...).
	Name() string
	// Cluster returns one label per row of x.
	Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error)
}

// Params configure every registered algorithm; each reads the fields it
// needs. Defaults (DefaultParams) follow Seidenschwarz et al. 2021 Tab. 4 (K = 900 for the
// methods with a fixed cluster count, eps = 0.9 and min samples = 5 for the
// density-based ones) and scikit-learn elsewhere.
type Params struct {
	// K is the number of clusters (kmeans, ward, spectral, birch).
	K int
	// Seed drives every random choice (k-means initialisations).
	Seed int64
	// Threads caps parallelism; <= 0 means GOMAXPROCS.
	Threads int

	// Eps is the neighbourhood radius (Euclidean distance, not squared) of
	// DBSCAN and the extraction radius of OPTICS.
	Eps float64
	// MinSamples is the number of points, the point itself included, an
	// eps-neighbourhood needs for a core point (DBSCAN, OPTICS).
	MinSamples int
	// OPTICSMaxEps bounds the OPTICS neighbourhood (+Inf = sklearn default).
	OPTICSMaxEps float64

	// MaxWardPoints is the largest N Ward accepts (its distance matrix takes
	// 4·N² bytes: 1.6 GB at 20 000).
	MaxWardPoints int

	// SpectralNeighbors is the k of the symmetrised k-NN affinity graph.
	SpectralNeighbors int
	// SpectralDenseLimit: up to this N the eigenvectors come from a dense
	// eigen-decomposition (O(N³): ~76 s at N = 2 420 in gonum), above it
	// from Chebyshev-filtered subspace iteration (~1 s there); default 300.
	SpectralDenseLimit int

	// BirchThreshold is the largest radius of a leaf subcluster.
	BirchThreshold float64
	// BirchBranching is the largest number of entries per CF-tree node.
	BirchBranching int

	// Searcher answers the k-NN queries (spectral graph, OPTICS core
	// distances); nil means knn.Exact.
	Searcher knn.Searcher
}

// DefaultParams returns the defaults documented on Params.
func DefaultParams() Params {
	return Params{
		K:                  900,
		Seed:               1234,
		Eps:                0.9,
		MinSamples:         5,
		OPTICSMaxEps:       math.Inf(1),
		MaxWardPoints:      20000,
		SpectralNeighbors:  10,
		SpectralDenseLimit: 300,
		BirchThreshold:     0.5,
		BirchBranching:     50,
	}
}

// Algorithms holds the clustering algorithms by name, compared
// case-insensitively (internal/registry).
var Algorithms = registry.NewFold[func(Params) (Clusterer, error)]("clustering algorithm")

func init() {
	Algorithms.Register("kmeans", func(p Params) (Clusterer, error) { return newKMeansClusterer(p) })
	Algorithms.Register("ward", func(p Params) (Clusterer, error) { return NewWard(p) })
	Algorithms.Register("spectral", func(p Params) (Clusterer, error) { return NewSpectral(p) })
	Algorithms.Register("birch", func(p Params) (Clusterer, error) { return NewBirch(p) })
	Algorithms.Register("dbscan", func(p Params) (Clusterer, error) { return NewDBSCAN(p) })
	Algorithms.Register("optics", func(p Params) (Clusterer, error) { return NewOPTICS(p) })
}

// Names lists the registered algorithms, sorted.
func Names() []string { return Algorithms.Names() }

// New returns the algorithm registered under name.
func New(name string, p Params) (Clusterer, error) {
	f, err := Algorithms.Get(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return f(p)
}

// NoiseAsSingletons returns a copy of labels in which every Noise point gets
// its own new cluster id (after the existing ones), so that metrics which
// need a partition (NMI, F1) can score a density-based clustering.
func NoiseAsSingletons(labels []int32) []int32 {
	out := make([]int32, len(labels))
	next := int32(0)
	for _, l := range labels {
		if l >= next {
			next = l + 1
		}
	}
	for i, l := range labels {
		if l == Noise {
			out[i] = next
			next++
		} else {
			out[i] = l
		}
	}
	return out
}

// relabel renumbers arbitrary non-negative ids densely in order of first
// appearance; negative ids stay Noise.
func relabel(ids []int32) []int32 {
	m := map[int32]int32{}
	out := make([]int32, len(ids))
	for i, id := range ids {
		if id < 0 {
			out[i] = Noise
			continue
		}
		v, ok := m[id]
		if !ok {
			v = int32(len(m))
			m[id] = v
		}
		out[i] = v
	}
	return out
}

// checkData validates a matrix for clustering.
func checkData(x mat32.Matrix) error {
	switch {
	case x.Rows <= 0 || x.Cols <= 0:
		return fmt.Errorf("%w: clustering needs a non-empty matrix, got %d×%d", ErrBadInput, x.Rows, x.Cols)
	case len(x.Data) != x.Rows*x.Cols:
		return fmt.Errorf("%w: matrix %d×%d has %d values, want %d", ErrBadInput, x.Rows, x.Cols, len(x.Data), x.Rows*x.Cols)
	}
	return checkFinite(x)
}

func checkK(name string, k, n int) error {
	if k <= 0 {
		return fmt.Errorf("%w: %s needs K > 0, got %d", ErrBadInput, name, k)
	}
	if k > n {
		return fmt.Errorf("%w: %s with K = %d clusters needs at least K points, got %d", ErrBadInput, name, k, n)
	}
	return nil
}

// sqDist64 is the squared Euclidean distance accumulated in float64.
func sqDist64(a, b []float32) float64 {
	var s0, s1 float64
	i := 0
	for ; i+1 < len(a); i += 2 {
		e0 := float64(a[i]) - float64(b[i])
		e1 := float64(a[i+1]) - float64(b[i+1])
		s0 += e0 * e0
		s1 += e1 * e1
	}
	if i < len(a) {
		e := float64(a[i]) - float64(b[i])
		s0 += e * e
	}
	return s0 + s1
}

// kmeansClusterer adapts KMeans to the Clusterer interface.
type kmeansClusterer struct{ p Params }

func newKMeansClusterer(p Params) (*kmeansClusterer, error) {
	if p.K <= 0 {
		return nil, fmt.Errorf("%w: kmeans needs K > 0, got %d", ErrBadInput, p.K)
	}
	return &kmeansClusterer{p}, nil
}

func (c *kmeansClusterer) Name() string { return "kmeans" }

// Cluster runs KMeans (faiss conventions, 20 iterations, no subsampling) and
// returns its assignment renumbered in order of first appearance.
func (c *kmeansClusterer) Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error) {
	opt := DefaultKMeansOptions()
	opt.Seed, opt.Threads = c.p.Seed, c.p.Threads
	res, err := KMeans(ctx, x, c.p.K, opt)
	if err != nil {
		return nil, err
	}
	return relabel(res.Assign), nil
}
