package metrics

import (
	"context"
	"fmt"
	"strings"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/kernelsel"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/knn"
)

// ClusterFunc returns the clustering that serves NMI, F1 and AMI in place
// of the backend's k-means (metrics.Options.Clustering), or nil for that
// k-means (algo "kmeans"). Other algorithms come from the clustering
// registry with K = the requested cluster count; density-based methods'
// noise points become singleton clusters so NMI and F1 score a partition.
func ClusterFunc(algo string, threads int, eps float64, minSamples int, searcher knn.Searcher) (KMeansFunc, error) {
	algo = strings.ToLower(algo)
	if algo == "" || algo == "kmeans" {
		return nil, nil
	}
	if _, err := clustering.Algorithms.Get(algo); err != nil {
		return nil, usage.Errorf("--clustering: %v", err)
	}
	return func(x mat32.Matrix, k int, seed int64) ([]int32, error) {
		p := clustering.DefaultParams()
		p.K, p.Seed, p.Threads, p.Searcher = k, seed, threads, searcher
		if eps > 0 {
			p.Eps = eps
		}
		if minSamples > 0 {
			p.MinSamples = minSamples
		}
		cl, err := clustering.New(algo, p)
		if err != nil {
			return nil, err
		}
		labels, err := cl.Cluster(context.Background(), x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", algo, err)
		}
		return clustering.NoiseAsSingletons(labels), nil
	}, nil
}

// KernelLines are `dmlbench version`'s lines about the CPU kernels and faiss.
func KernelLines() []string {
	// The SIMD levels only: the pure-Go fallback is always there and is
	// named on the kernel lines when it is the one in use.
	var have []string
	for l := kernelsel.AVX512; l > kernelsel.Portable; l-- {
		if kernelsel.Supported(l) {
			have = append(have, l.String())
		}
	}
	if len(have) == 0 {
		have = append(have, "none")
	}
	faiss := "faiss: not compiled (build with -tags faiss after `make faiss`)"
	if knn.FaissCompiled {
		faiss = "faiss: " + knn.FaissVersion()
	}
	return []string{
		"distance kernel: " + knn.KernelName(),
		"k-means assignment kernel: " + clustering.KernelName(),
		"SIMD levels on this CPU: " + strings.Join(have, " ") + " (chosen at run time; " + kernelsel.EnvVar + "=LEVEL forces one)",
		faiss,
	}
}
