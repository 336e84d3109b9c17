package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/kernelsel"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
)

func init() {
	versionLines = append(versionLines,
		func() string { return "distance kernel: " + knn.KernelName() },
		func() string { return "k-means assignment kernel: " + clustering.KernelName() },
		func() string {
			// The SIMD levels only: the pure-Go fallback is always there and
			// is named on the kernel lines when it is the one in use.
			var have []string
			for l := kernelsel.AVX512; l > kernelsel.Portable; l-- {
				if kernelsel.Supported(l) {
					have = append(have, l.String())
				}
			}
			if len(have) == 0 {
				have = append(have, "none")
			}
			return "SIMD levels on this CPU: " + strings.Join(have, " ") + " (chosen at run time; " + kernelsel.EnvVar + "=LEVEL forces one)"
		},
		func() string {
			if !knn.FaissCompiled {
				return "faiss: not compiled (build with -tags faiss after `make faiss`)"
			}
			return "faiss: " + knn.FaissVersion()
		},
	)
}

// portableWarned makes the portable-kernel warning appear once per process.
var portableWarned sync.Once

// checkKernels rejects a bad DMLBENCH_KERNEL and says once on stderr when
// the portable (several times slower) kernels run on an amd64 CPU that was
// not asked for them.
func checkKernels(stderr io.Writer) error {
	if err := kernelsel.Err(); err != nil {
		return err
	}
	if kernelsel.PortableOnAMD64() && os.Getenv(kernelsel.EnvVar) == "" {
		portableWarned.Do(func() {
			fmt.Fprintln(stderr, "dmlbench: warning: this amd64 CPU lacks AVX2+FMA (or the binary was built with -tags purego): the portable distance and k-means kernels run, several times slower")
		})
	}
	return nil
}

// clusterFunc returns the clustering that serves NMI, F1 and AMI, or nil
// for metrics.Evaluate's k-means.
//
// With algo "kmeans" metrics.Evaluate picks the k-means of the convention
// for the k-NN backend it searches with (clustering.KMeansFor: faiss's own
// for faiss backends, the GPU assignment for gpu and auto with a device,
// else the pure-Go one). Other algorithms come from the clustering
// registry with K = the requested cluster count; density-based methods'
// noise points become singleton clusters so NMI and F1 score a partition.
func clusterFunc(algo, backend, compat string, threads int, eps float64, minSamples int, searcher knn.Searcher) (metrics.KMeansFunc, error) {
	algo = strings.ToLower(algo)
	if algo == "" || algo == "kmeans" {
		// Checked here so that a bad convention, or a backend whose k-means
		// cannot start, fails before any work.
		if _, err := clustering.KMeansFor(backend, compat, threads); err != nil {
			if errors.Is(err, clustering.ErrBadInput) {
				return nil, usagef("--compat: %v", err)
			}
			return nil, err
		}
		return nil, nil
	}
	if _, err := clustering.Algorithms.Get(algo); err != nil {
		return nil, usagef("--clustering: %v", err)
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
