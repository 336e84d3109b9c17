package blas32

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's pure-Go BLAS with Sgemm and Dgemm served by
// this package's blocked kernels; it satisfies blas.Float32 and blas.Float64
// (and Gorgonia's BLAS interface, for G.Use).
type Implementation struct {
	gonum.Implementation
	// Threads is the most goroutines one Sgemm or Dgemm call uses (0 =
	// GOMAXPROCS). The results do not depend on it (package comment).
	Threads int
}

// Sgemm computes C = α·op(A)·op(B) + β·C for row-major matrices, where
// op(X) is X or Xᵀ, op(A) is m×k and op(B) is k×n (blas.Float32). β = 0
// sets C to zero first (NaNs in C do not propagate), as the reference
// BLAS does (the kernels then store instead of read-modify-write).
// Arguments that gonum would reject are handed to gonum, which panics with
// its usual message.
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kern := active.Load().s
	if kern.fn == nil || !gemmArgsOK(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemmChecked(kern, impl.Threads, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm in float64 (blas.Float64): the losses' float64 graphs
// (trainers/losses) make these products. The float64 kernels are AVX-512
// 12×16 and AVX2+FMA 6×8, with the same blocking and summation order.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	kern := active.Load().d
	if kern.fn == nil || !gemmArgsOK(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemmChecked(kern, impl.Threads, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmChecked is Sgemm/Dgemm after the argument checks.
func gemmChecked[T elem](kern tile[T], threads int, tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	overwrite := beta == 0 && alpha != 0 && k > 0 // the kernels store, C is not read
	switch {
	case beta == 1 || overwrite:
	case beta == 0:
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	default:
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
	}
	if alpha == 0 || k == 0 {
		return
	}
	opA := operand[T]{data: a, ld: lda, trans: tA != blas.NoTrans}
	opB := operand[T]{data: b, ld: ldb, trans: tB != blas.NoTrans}
	gemm(kern, threads, m, n, k, alpha, opA, opB, c, ldc, overwrite)
}

// gemmArgsOK mirrors the argument checks of the reference Sgemm: valid
// transposes, non-negative sizes, leading dimensions at least the stored
// row width, and slices long enough.
func gemmArgsOK(tA, tB blas.Transpose, m, n, k, la, lda, lb, ldb, lc, ldc int) bool {
	okT := func(t blas.Transpose) bool { return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans }
	if !okT(tA) || !okT(tB) || m < 0 || n < 0 || k < 0 {
		return false
	}
	rowsA, colsA := m, k
	if tA != blas.NoTrans {
		rowsA, colsA = k, m
	}
	rowsB, colsB := k, n
	if tB != blas.NoTrans {
		rowsB, colsB = n, k
	}
	if lda < max(1, colsA) || ldb < max(1, colsB) || ldc < max(1, n) {
		return false
	}
	if m == 0 || n == 0 {
		return true
	}
	need := func(rows, cols, ld int) int {
		if rows == 0 || cols == 0 {
			return 0
		}
		return (rows-1)*ld + cols
	}
	return la >= need(rowsA, colsA, lda) && lb >= need(rowsB, colsB, ldb) && lc >= need(m, n, ldc)
}
