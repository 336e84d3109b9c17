package model

import (
	"math"

	"github.com/dmlbench/dmlbench/trainers/param"
	"gonum.org/v1/gonum/blas"
)

// The MLP's layers and the output layer of both architectures, each a
// tight loop (or one GEMM) over preallocated memory. Conventions: ReLU(x) =
// max(x, 0) (NaN stays NaN), its gradient g·[x ≥ 0]; a bias gradient is
// the column sums of g in ascending rows. Every gradient of a pass is
// computed apart and then added to Param.Grad, so that a multistage batch
// sums whole chunks in chunk order.

// dense is the linear map y = x W + b for x (rows×in), W (in×out) and a
// bias row b (1×out) broadcast along rows.
type dense struct {
	w, b    *param.Param
	in, out int
	dw, db  []float32 // the gradients of one pass
}

func newDense(w, b *param.Param) *dense {
	return &dense{w: w, b: b, in: w.Shape[0], out: w.Shape[1], dw: make([]float32, len(w.Data)), db: make([]float32, w.Shape[1])}
}

func (l *dense) forward(x []float32, rows int, y []float32) {
	gemm32.Sgemm(blas.NoTrans, blas.NoTrans, rows, l.out, l.in, 1, x, l.in, l.w.Data, l.out, 0, y, l.out)
	b := l.b.Data[:l.out]
	for i := 0; i < rows*l.out; i += l.out {
		yi := y[i : i+l.out]
		for j := range yi {
			yi[j] += b[j]
		}
	}
}

// backward: dW += xᵀ dy, db += Σ_rows dy, dx = dy Wᵀ.
func (l *dense) backward(x, y, dy []float32, rows int, dx []float32) {
	gemm32.Sgemm(blas.Trans, blas.NoTrans, l.in, l.out, rows, 1, x, l.in, dy, l.out, 0, l.dw, l.out)
	addTo(l.w.Grad, l.dw)
	addColSums(l.db, l.b.Grad, dy, rows, l.out)
	if dx != nil {
		gemm32.Sgemm(blas.NoTrans, blas.Trans, rows, l.in, l.out, 1, dy, l.out, l.w.Data, l.out, 0, dx, l.in)
	}
}

// addTo adds v to acc elementwise.
func addTo(acc, v []float32) {
	acc = acc[:len(v)]
	for i, x := range v {
		acc[i] += x
	}
}

// addColSums adds the column sums of g (rows×cols, ascending rows, summed
// in s from zero) to acc.
func addColSums(s, acc, g []float32, rows, cols int) {
	clear(s)
	for i := 0; i < rows*cols; i += cols {
		gi := g[i : i+cols]
		for j, v := range gi {
			s[j] += v
		}
	}
	addTo(acc, s)
}

// reluLayer is ReLU elementwise.
type reluLayer struct{}

func (reluLayer) forward(x []float32, rows int, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

func (reluLayer) backward(x, y, dy []float32, rows int, dx []float32) {
	if dx == nil {
		return
	}
	dy, dx = dy[:len(x)], dx[:len(x)]
	for i, v := range x {
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & geZero(v))
	}
}

// geZero is all ones if v ≥ 0 (−0 included), else zero (NaN included),
// without a branch: random signs make a branch mispredict half the time.
func geZero(v float32) uint32 {
	b := math.Float32bits(v)
	neg := b >> 31                                                   // 1 for negative numbers, −0 and negative NaNs
	zero := uint32((uint64(b<<1) - 1) >> 63)                         // 1 for ±0
	nan := uint32((uint64(0x7f800000) - uint64(b&0x7fffffff)) >> 63) // 1 for NaN
	return -((1 - neg | zero) &^ nan)
}

// l2Norm is e = z/n per row with n = √(Σ z² + ε) (ε = l2Eps); its
// gradient is dz = dy/n − z·(Σ dy⊙z)/n³, evaluated as the chain rule
// through the division, the square root and the sum of squares.
type l2Norm struct {
	cols int
	norm []float32 // n of each row of the latest forward
}

func newL2Norm(cols, chunk int) *l2Norm { return &l2Norm{cols: cols, norm: make([]float32, chunk)} }

func (l *l2Norm) forward(x []float32, rows int, y []float32) {
	for r := 0; r < rows; r++ {
		xi, yi := x[r*l.cols:(r+1)*l.cols], y[r*l.cols:(r+1)*l.cols]
		var ss float32
		for _, v := range xi {
			ss += v * v
		}
		n := float32(math.Sqrt(float64(ss + l2Eps)))
		l.norm[r] = n
		for j, v := range xi {
			yi[j] = v / n
		}
	}
}

func (l *l2Norm) backward(x, y, dy []float32, rows int, dx []float32) {
	for r := 0; r < rows; r++ {
		xi, yi := x[r*l.cols:(r+1)*l.cols], y[r*l.cols:(r+1)*l.cols]
		gi, di := dy[r*l.cols:(r+1)*l.cols], dx[r*l.cols:(r+1)*l.cols]
		n := l.norm[r]
		var dn float32 // ∂/∂n of Σ dy⊙(z/n): Σ −(e/n)·dy
		for j, e := range yi {
			dn += -(e / n) * gi[j]
		}
		dss := dn / (2 * n) // through n = √(ss + ε)
		for j, v := range xi {
			di[j] = gi[j]/n + (v*2)*dss
		}
	}
}
