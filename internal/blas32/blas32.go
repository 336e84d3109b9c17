package blas32

import (
	"sync"

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
	opA := rows[T]{operand[T]{data: a, ld: lda, trans: tA != blas.NoTrans}}
	opB := rows[T]{operand[T]{data: b, ld: ldb, trans: tB == blas.NoTrans}} // V = op(B)ᵀ
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

// Panels is an operand of SgemmPanels that packs its own blocks, so that an
// implicit matrix (a convolution's im2col matrix, built from the input map
// while it is packed) never has to be stored whole. It is seen as an n×k
// matrix V, n being the dimension that is not summed: V = A for the m×k
// left operand, V = Bᵀ for the k×n right one. Pack writes the block of V
// with rows [i0, i0+n) and columns [p0, p0+kb) into dst as ⌈n/w⌉
// micro-panels of kb steps of w values,
//
//	dst[g·w·kb + p·w + r] = V[i0+g·w+r][p0+p],
//
// zero for rows at or past i0+n (w ≤ 64: the kernels' register block, or 1).
type Panels interface {
	Pack(dst []float32, i0, p0, n, kb, w int)
}

// Matrix is a stored row-major matrix as Panels: V[i][p] = data[i·ld+p], or
// data[p·ld+i] when trans. A left operand op(A) is Matrix(a, lda, tA ≠
// NoTrans), a right operand op(B) is Matrix(b, ldb, tB = NoTrans).
func Matrix(data []float32, ld int, trans bool) Panels {
	return rows[float32]{operand[float32]{data: data, ld: ld, trans: trans}}
}

// wholeBuffers holds gonum's operands of SgemmPanels between calls.
var wholeBuffers = sync.Pool{New: func() any { return new([3][]float32) }}

// sgemmWhole is SgemmPanels on gonum's Sgemm, in its fastest form
// (NoTrans·NoTrans, the long dimension as rows): both operands packed whole
// (w = 1, V row-major); for n > m it computes Cᵀ = B·Aᵀ with the small A
// transposed and writes C from Cᵀ, else C = A·B with B transposed.
func (impl Implementation) sgemmWhole(m, n, k int, alpha float32, a, b Panels, c []float32, ldc int) {
	buf := wholeBuffers.Get().(*[3][]float32)
	defer wholeBuffers.Put(buf)
	va, vb := grow(buf[0], m*k), grow(buf[1], n*k)
	a.Pack(va, 0, 0, m, k, 1)
	b.Pack(vb, 0, 0, n, k, 1)
	var w []float32
	if n > m {
		w = grow(buf[2], k*m+n*m)
		vat, ct := w[:k*m], w[k*m:]
		transposeInto(vat, va, m, k)
		impl.Implementation.Sgemm(blas.NoTrans, blas.NoTrans, n, m, k, alpha, vb, k, vat, m, 0, ct, m)
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] = ct[j*m+i]
			}
		}
	} else {
		w = grow(buf[2], k*n)
		transposeInto(w, vb, n, k)
		impl.Implementation.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, alpha, va, k, w, n, 0, c, ldc)
	}
	*buf = [3][]float32{va, vb, w}
}

// transposeInto writes the cols×rows transpose of the rows×cols src into dst.
func transposeInto(dst, src []float32, rows, cols int) {
	for r := 0; r < rows; r++ {
		for q, v := range src[r*cols : r*cols+cols] {
			dst[q*rows+r] = v
		}
	}
}

// SgemmPanels computes C = α·A·B for the m×k A and k×n B given as Panels
// (V = A and V = Bᵀ); C (m×n, row stride ldc ≥ n) is written, not read. The
// blocking, kernel and summation order are Sgemm's (package comment), so a
// Panels operand gives the bits of the same matrix stored and passed to
// Sgemm. With the gonum kernel both operands are packed whole (w = 1: V
// row-major) and handed to gonum's Sgemm.
func (impl Implementation) SgemmPanels(m, n, k int, alpha float32, a, b Panels, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 || ldc < max(1, n) || (m > 0 && n > 0 && len(c) < (m-1)*ldc+n) {
		panic("blas32: SgemmPanels: bad sizes")
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	kern := active.Load().s
	if kern.fn == nil {
		impl.sgemmWhole(m, n, k, alpha, a, b, c, ldc)
		return
	}
	gemm[float32](kern, impl.Threads, m, n, k, alpha, a, b, c, ldc, true)
}
