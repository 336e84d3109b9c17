package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/knn/gpu"
	"github.com/dmlbench/dmlbench/metrics"
)

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
