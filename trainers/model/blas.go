package model

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"

	G "gorgonia.org/gorgonia"

	"github.com/dmlbench/dmlbench/internal/blas32"
)

// BLASName names the BLAS of the matrix products in this build:
// "dmlbench/avx512", "dmlbench/avx2" or "dmlbench/portable" (the project's
// Sgemm, internal/blas32, kernel chosen at run time, by DMLBENCH_KERNEL or DMLBENCH_GEMM;
// the default in every build, no cgo), or "openblas" (build tag openblas,
// cgo, optional).
var BLASName = "dmlbench/" + blas32.Kernel()

// gemm32 computes the models' matrix products.
var gemm32 blas.Float32 = blas32.Implementation{}

// gorgoniaBLAS is what UseBLAS hands to Gorgonia.
var gorgoniaBLAS G.BLAS = blas32.Implementation{}

var useOnce sync.Once

// UseBLAS routes the matrix products of every Gorgonia graph in the process
// (the losses', trainers/losses) to this build's BLAS (BLASName), so that
// they give the same numbers as in training. The trainer calls it when it
// sets up, as does anything else that runs a loss; later calls do nothing.
func UseBLAS() { useOnce.Do(func() { G.Use(gorgoniaBLAS) }) }

// checkBLAS reports a DMLBENCH_GEMM value this CPU/build cannot honour, so
// that a forced kernel is never silently replaced.
func checkBLAS() error {
	if err := blas32.EnvError(); err != nil && BLASName != "openblas" {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}
