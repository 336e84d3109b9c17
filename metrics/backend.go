package metrics

import (
	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/registry"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/knn/gpu"
)

// Backends is the table of k-NN backends a name (--backend, a config's
// backend) chooses from: knn's own (exact, and faiss when compiled in)
// and the device's (gpu, auto), built here rather than by the packages
// writing into one another's tables.
var Backends = backendTable()

func backendTable() *registry.Registry[knn.Backend] {
	r := registry.New[knn.Backend]("k-NN backend")
	for _, e := range knn.Backends.Entries() {
		if e.Available {
			r.Register(e.Name, e.Value)
		} else {
			r.Unavailable(e.Name, e.Summary, e.HowToGet)
		}
	}
	gpu.Register(r)
	return r
}

// Backend is a k-NN backend resolved into values once, where a command
// line or a config is read, and passed down: the search behind every
// retrieval metric and the k-means behind NMI, F1 and AMI, on the same
// hardware (pytorch-metric-learning's AccuracyCalculator likewise takes a
// knn_func and a kmeans_func).
type Backend struct {
	Searcher knn.Searcher // nil: knn.Exact
	// KMeans is the convention's k-means where Searcher searches
	// (clustering.KMeansOn); nil: built from Options.Convention.
	KMeans *clustering.KMeansEngine
}

// OpenBackend resolves the backend named name (Backends) for
// convention conv ("": strict): its searcher, and the convention's k-means
// (clustering.KMeansPreset, threads workers, <= 0: all cores) on the
// searcher's hardware: faiss's own for faiss, the device's assignment step
// for gpu and for auto with a GPU, else the CPU kernel. An unknown name
// is suggest.Unknown's error; a backend that cannot start (no GPU for
// "gpu", faiss not compiled) says why.
func OpenBackend(name string, conv Convention, threads int) (Backend, error) {
	b, err := Backends.Get(name)
	if err != nil {
		return Backend{}, err
	}
	s, err := b.New()
	if err != nil {
		return Backend{}, err
	}
	if conv == "" {
		conv = Strict
	}
	opt, err := clustering.KMeansPreset(string(conv))
	if err != nil {
		return Backend{}, err
	}
	opt.Threads = threads
	return Backend{Searcher: s, KMeans: clustering.KMeansOn(s, opt)}, nil
}
