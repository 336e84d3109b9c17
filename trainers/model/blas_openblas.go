//go:build openblas && cgo

package model

/*
#cgo CFLAGS: -I/usr/include/x86_64-linux-gnu/openblas-pthread
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// openBLAS is gonum's pure-Go BLAS with the level-3 products (Sgemm,
// Dgemm), which dominate training time, delegated to OpenBLAS through cgo
// (Debian: apt-get install libopenblas-dev; build with -tags openblas).
type openBLAS struct{ gonum.Implementation }

func cblasTrans(t blas.Transpose) C.enum_CBLAS_TRANSPOSE {
	if t == blas.NoTrans {
		return C.CblasNoTrans
	}
	return C.CblasTrans
}

// Sgemm computes C = α·op(A)·op(B) + β·C (row-major), as blas.Float32.
func (o openBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 || len(a) == 0 || len(b) == 0 || len(c) == 0 {
		o.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.cblas_sgemm(C.CblasRowMajor, cblasTrans(tA), cblasTrans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(&a[0]), C.blasint(lda), (*C.float)(&b[0]), C.blasint(ldb),
		C.float(beta), (*C.float)(&c[0]), C.blasint(ldc))
}

// Dgemm is Sgemm's float64 twin.
func (o openBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 || len(a) == 0 || len(b) == 0 || len(c) == 0 {
		o.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, cblasTrans(tA), cblasTrans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), (*C.double)(&a[0]), C.blasint(lda), (*C.double)(&b[0]), C.blasint(ldb),
		C.double(beta), (*C.double)(&c[0]), C.blasint(ldc))
}

func init() {
	gorgoniaBLAS = openBLAS{}
	gemm32 = openBLAS{}
	BLASName = "openblas"
}
