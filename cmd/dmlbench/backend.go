package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers"
)

func init() {
	versionLines = append(versionLines,
		func() string { return "distance kernel: " + knn.KernelName() },
		func() string { return "k-means assignment kernel: " + clustering.KernelName() },
		func() string {
			if !knn.FaissCompiled {
				return "faiss: not compiled (build with -tags faiss after `make faiss`)"
			}
			return "faiss: " + knn.FaissVersion()
		},
	)
}

// clusterFunc returns the clustering that serves NMI, F1 and AMI, or nil
// for metrics.Evaluate's built-in k-means.
//
// With algo "kmeans" and a faiss backend, faiss's own k-means runs with
// the preset of the convention (trainers.FaissKMeans). Other
// algorithms come from the clustering registry with K = the requested
// cluster count; density-based methods' noise points become singleton
// clusters so NMI and F1 score a partition.
func clusterFunc(algo, backend, compat string, threads int, eps float64, minSamples int, searcher knn.Searcher) (metrics.KMeansFunc, error) {
	algo = strings.ToLower(algo)
	if algo == "" || algo == "kmeans" {
		f, err := trainers.FaissKMeans(backend, compat, threads)
		if err != nil {
			return nil, usagef("--compat: %v", err)
		}
		return f, nil
	}
	if _, err := clustering.Algorithms.Get(algo); err != nil {
		return nil, usagef("--clustering: %v", err)
	}
	return func(x knn.Matrix, k int, seed int64) ([]int32, error) {
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
