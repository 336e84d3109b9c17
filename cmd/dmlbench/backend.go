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
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/knn/gpu"
	"github.com/dmlbench/dmlbench/metrics"
)

// kernelLines are version's lines about the CPU kernels and faiss.
func kernelLines() []string {
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

// openBackend resolves --backend once, for the convention conv, into the
// searcher and k-means that every stage below uses (metrics.OpenBackend).
// An unknown name is a usage error with the nearest one; a backend that
// cannot start says why. auto says on stderr when it picked the GPU.
func openBackend(name string, conv metrics.Convention, threads int, stderr io.Writer) (metrics.Backend, error) {
	b, err := metrics.OpenBackend(name, conv, threads)
	if errors.Is(err, suggest.ErrUnknown) {
		return b, usagef("--backend: %v", err)
	}
	if err != nil {
		return b, err
	}
	if g, ok := b.Searcher.(gpu.Searcher); ok && name == gpu.AutoName {
		fmt.Fprintf(stderr, "dmlbench: --backend auto: k-NN and k-means on the GPU, %s\n", g.Device)
	}
	return b, nil
}

// clusterFunc returns the clustering that serves NMI, F1 and AMI in place
// of the backend's k-means (metrics.Options.Clustering), or nil for that
// k-means (algo "kmeans"). Other algorithms come from the clustering
// registry with K = the requested cluster count; density-based methods'
// noise points become singleton clusters so NMI and F1 score a partition.
func clusterFunc(algo string, threads int, eps float64, minSamples int, searcher knn.Searcher) (metrics.KMeansFunc, error) {
	algo = strings.ToLower(algo)
	if algo == "" || algo == "kmeans" {
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
