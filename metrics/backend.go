package metrics

import (
	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/knn"
)

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

// OpenBackend resolves the backend named name (knn.Backends) for
// convention conv ("": strict): its searcher, and the convention's k-means
// (clustering.KMeansPreset, threads workers, <= 0: all cores) on the
// searcher's hardware: faiss's own for faiss, the device's assignment step
// for gpu and for auto with a GPU, else the CPU kernel. An unknown name
// is suggest.Unknown's error; a backend that cannot start (no GPU for
// "gpu", faiss not compiled) says why.
func OpenBackend(name string, conv Convention, threads int) (Backend, error) {
	s, err := knn.New(name)
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
