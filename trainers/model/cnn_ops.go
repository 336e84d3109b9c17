package model

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/trainers/param"
)

// The CNN's convolution block: im2col → one GEMM (internal/blas32) → one
// fused pool+bias+ReLU pass, with maps kept channels-last between blocks so
// that there is no transpose; each step and its gradient is one tight loop
// over preallocated memory.
//
// Layouts, for a batch of B maps of C channels, H×W pixels:
//
//	channels-first (NCHW): x[b][c·H·W + y·W + x], a B×(C·H·W) matrix (the
//	  input rows, and the output of the last block, so that the flatten
//	  order is that of the type comment of CNN);
//	channels-last (NHWC): z[(b·H + y)·W + x][c], a (B·H·W)×C matrix (the
//	  GEMM's output, and the input of every block but the first);
//	im2col: col[(b·H + y)·W + x][c·9 + ky·3 + kx] = x(b, c, y+ky−1, x+kx−1),
//	  zero outside the map (stride 1, zero padding 1), a (B·H·W)×(C·9)
//	  matrix, the row order of the conv weight.

// geom is the geometry of a block input.
type geom struct {
	B, C, H, W int
	nhwc       bool // the input layout: channels-last, or channels-first
}

// at returns the offset of pixel (b, c, y, x) in a map of this layout.
func (g geom) at(b, c, y, x int) int {
	if g.nhwc {
		return ((b*g.H+y)*g.W+x)*g.C + c
	}
	return ((b*g.C+c)*g.H+y)*g.W + x
}

func (g geom) String() string {
	l := "NCHW"
	if g.nhwc {
		l = "NHWC"
	}
	return fmt.Sprintf("%d×%d×%d×%d %s", g.B, g.C, g.H, g.W, l)
}

// chanStride is the distance between channels of one pixel.
func (g geom) chanStride() int {
	if g.nhwc {
		return 1
	}
	return g.H * g.W
}

// im2col fills col from x (package layouts), one goroutine per range of maps.
func im2col(g geom, x, col []float32) {
	K, cs := g.C*9, g.chanStride()
	parallelBatch(g.B, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			for y := 0; y < g.H; y++ {
				for xx := 0; xx < g.W; xx++ {
					row := col[((b*g.H+y)*g.W+xx)*K:][:K]
					for k := 0; k < 9; k++ {
						sy, sx := y+k/3-1, xx+k%3-1
						if sy < 0 || sy >= g.H || sx < 0 || sx >= g.W {
							for c := 0; c < g.C; c++ {
								row[c*9+k] = 0
							}
							continue
						}
						off := g.at(b, 0, sy, sx)
						for c := 0; c < g.C; c++ {
							row[c*9+k] = x[off+c*cs]
						}
					}
				}
			}
		}
	})
}

// col2im adds the entries of col into dx (zeroed here), im2col's adjoint;
// each pixel sums its entries in ascending row, then tap, order.
func col2im(g geom, col, dx []float32) {
	K, cs := g.C*9, g.chanStride()
	parallelBatch(g.B, func(b0, b1 int) {
		per := g.C * g.H * g.W // one map, either layout
		clear(dx[b0*per : b1*per])
		for b := b0; b < b1; b++ {
			for y := 0; y < g.H; y++ {
				for xx := 0; xx < g.W; xx++ {
					row := col[((b*g.H+y)*g.W+xx)*K:][:K]
					for k := 0; k < 9; k++ {
						sy, sx := y+k/3-1, xx+k%3-1
						if sy < 0 || sy >= g.H || sx < 0 || sx >= g.W {
							continue
						}
						off := g.at(b, 0, sy, sx)
						for c := 0; c < g.C; c++ {
							dx[off+c*cs] += row[c*9+k]
						}
					}
				}
			}
		}
	})
}

// pool is out = max(0, max_window z + bias[c]) over non-overlapping 2×2
// windows (stride 2, no padding, trailing odd row/column dropped) of the
// channels-last GEMM output z ((B·H·W)×C) and the bias (1×C). Adding a
// per-channel constant commutes with the window maximum, and ReLU (monotone)
// with both, so this is ReLU(MaxPool(conv + bias)) in one pass. The output
// is channels-last ((B·H/2·W/2)×C), or channels-first (B×(C·H/2·W/2)) when
// chw is set (the last block, for the flatten order). Its gradient routes
// each pooled pixel's gradient to its window's first maximum when the output
// is positive (ReLU), else nowhere; the bias gradient is, per channel, the
// sum of the gradients of the positive outputs (ascending output offset).
type pool struct {
	g   geom // of z: B, C (= cout), H, W; nhwc is ignored (always NHWC)
	chw bool
}

func (op pool) ho() int { return op.g.H / 2 }
func (op pool) wo() int { return op.g.W / 2 }

// outAt is the output offset of pooled pixel (b, c, oy, ox).
func (op pool) outAt(b, c, oy, ox int) int {
	if op.chw {
		return ((b*op.g.C+c)*op.ho()+oy)*op.wo() + ox
	}
	return ((b*op.ho()+oy)*op.wo()+ox)*op.g.C + c
}

// window returns the offsets in z of the 2×2 window of pooled pixel
// (b, oy, ox), channel 0, in row-major window order.
func (op pool) window(b, oy, ox int) (p0, p1, p2, p3 int) {
	C, W := op.g.C, op.g.W
	p0 = ((b*op.g.H+2*oy)*W + 2*ox) * C
	return p0, p0 + C, p0 + W*C, p0 + W*C + C
}

// forward writes the pooled pixels of maps b0..b1−1: per channel the
// window maximum, plus the bias, through ReLU.
func (op pool) forward(z, bias, o []float32, b0, b1 int) {
	C, ho, wo := op.g.C, op.ho(), op.wo()
	bias = bias[:C]
	for b := b0; b < b1; b++ {
		for oy := 0; oy < ho; oy++ {
			for ox := 0; ox < wo; ox++ {
				p0, p1, p2, p3 := op.window(b, oy, ox)
				r0, r1, r2, r3 := z[p0:p0+C], z[p1:p1+C], z[p2:p2+C], z[p3:p3+C]
				if op.chw {
					base, step := op.outAt(b, 0, oy, ox), ho*wo
					for c := range r0 {
						o[base+c*step] = poolValue(r0[c], r1[c], r2[c], r3[c], bias[c])
					}
					continue
				}
				base := op.outAt(b, 0, oy, ox)
				oc := o[base : base+C]
				for c := range oc {
					oc[c] = poolValue(r0[c], r1[c], r2[c], r3[c], bias[c])
				}
			}
		}
	}
}

// poolValue is ReLU(max(v0, v1, v2, v3) + b) with Go's branch-free max
// (random data makes a compare-and-branch chain mispredict about once per
// compare). It equals the first-maximum compare chain except for signed zeros
// (−0 vs +0, numerically equal) and NaN, which max propagates from any
// window position.
func poolValue(v0, v1, v2, v3, b float32) float32 {
	return max(max(max(v0, v1), max(v2, v3))+b, 0)
}

// backward writes the gradient of maps b0..b1−1 into dz (zeroed): each
// pooled pixel's gradient goes to the first window position holding the
// window maximum when the output is positive (ReLU), else nowhere. Written
// without data-dependent branches (random data mispredicts them).
func (op pool) backward(z, o, gr, dz []float32, b0, b1 int) {
	C, ho, wo := op.g.C, op.ho(), op.wo()
	for b := b0; b < b1; b++ {
		for oy := 0; oy < ho; oy++ {
			for ox := 0; ox < wo; ox++ {
				p0, p1, p2, p3 := op.window(b, oy, ox)
				r0, r1, r2, r3 := z[p0:p0+C], z[p1:p1+C], z[p2:p2+C], z[p3:p3+C]
				base, step := op.outAt(b, 0, oy, ox), 1
				if op.chw {
					step = ho * wo
				}
				offs := [4]int{p0, p1, p2, p3}
				for c := range r0 {
					v0, v1, v2, v3 := r0[c], r1[c], r2[c], r3[c]
					m := max(max(v0, v1), max(v2, v3))
					// k = index of the first v == m (3 if none: NaN)
					n0, n1, n2 := b2i(v0 != m), b2i(v1 != m), b2i(v2 != m)
					k := n0 * (1 + n1*(1+n2))
					i := base + c*step
					g := gr[i]
					dz[offs[k]+c] = math.Float32frombits(math.Float32bits(g) & -uint32(b2i(o[i] > 0)))
				}
			}
		}
	}
}

// b2i is 1 for true, 0 for false (compiled to SETcc, no branch).
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// biasGrad writes the bias gradient of output o and its gradient gr
// into db (zeroed here).
func (op pool) biasGrad(o, gr, db []float32) {
	C := op.g.C
	no := op.g.B * op.ho() * op.wo() * C
	clear(db)
	if op.chw {
		hw := op.ho() * op.wo()
		for i := 0; i < no; i++ {
			if o[i] > 0 {
				db[(i/hw)%C] += gr[i]
			}
		}
		return
	}
	for i := 0; i < no; i += C {
		oi, gi := o[i:i+C], gr[i:i+C]
		for c := range oi {
			if oi[c] > 0 {
				db[c] += gi[c]
			}
		}
	}
}

// parallelBatch runs f over [0, B) split into one contiguous range of maps
// per worker (GOMAXPROCS of them at most). The steps write disjoint
// outputs per map, so the numbers do not depend on the split.
func parallelBatch(B int, f func(b0, b1 int)) {
	t := min(parallel.Threads(0), B)
	if t <= 1 {
		f(0, B)
		return
	}
	per := (B + t - 1) / t
	parallel.For(t, (B+per-1)/per, func(i int) { f(i*per, min((i+1)*per, B)) })
}

// convBlock is ReLU(MaxPool2×2(Conv3×3(x; W) + b)) on a batch of maps of
// cin channels, H×W pixels, channels-first (the network input) or
// channels-last (nhwc): im2col, z = col·W with the (cin·9)×cout weight,
// then the fused pool. Its gradient: dz from the pool, dW += colᵀ·dz, the
// bias from the pool, and dx = col2im(dz·Wᵀ).
type convBlock struct {
	w, b       *param.Param
	in         geom // B is the chunk; forward and backward use their rows
	cout       int
	chw        bool
	col, z, dz []float32 // im2col matrix (then its gradient), GEMM output and its gradient
	dw, db     []float32 // the gradients of one pass
}

func newConvBlock(w, b *param.Param, in geom, chw bool) *convBlock {
	cout := w.Shape[1]
	n := in.B * in.H * in.W
	return &convBlock{w: w, b: b, in: in, cout: cout, chw: chw,
		col: make([]float32, n*in.C*9), z: make([]float32, n*cout), dz: make([]float32, n*cout), dw: make([]float32, len(w.Data)), db: make([]float32, cout)}
}

// outWidth is the width of one output row (one map).
func (l *convBlock) outWidth() int { return l.cout * (l.in.H / 2) * (l.in.W / 2) }

func (l *convBlock) geom(rows int) (geom, pool) {
	g := l.in
	g.B = rows
	return g, pool{g: geom{B: rows, C: l.cout, H: g.H, W: g.W, nhwc: true}, chw: l.chw}
}

func (l *convBlock) forward(x []float32, rows int, y []float32) {
	g, p := l.geom(rows)
	n, k := rows*g.H*g.W, g.C*9
	col, z := l.col[:n*k], l.z[:n*l.cout]
	im2col(g, x, col)
	gemm32.Sgemm(blas.NoTrans, blas.NoTrans, n, l.cout, k, 1, col, k, l.w.Data, l.cout, 0, z, l.cout)
	bias := l.b.Data
	parallelBatch(rows, func(b0, b1 int) { p.forward(z, bias, y, b0, b1) })
}

func (l *convBlock) backward(x, y, dy []float32, rows int, dx []float32) {
	g, p := l.geom(rows)
	n, k := rows*g.H*g.W, g.C*9
	col, z, dz := l.col[:n*k], l.z[:n*l.cout], l.dz[:n*l.cout]
	parallelBatch(rows, func(b0, b1 int) {
		per := g.H * g.W * l.cout // one map of z
		clear(dz[b0*per : b1*per])
		p.backward(z, y, dy, dz, b0, b1)
	})
	p.biasGrad(y, dy, l.db)
	addTo(l.b.Grad, l.db)
	gemm32.Sgemm(blas.Trans, blas.NoTrans, k, l.cout, n, 1, col, k, dz, l.cout, 0, l.dw, l.cout)
	addTo(l.w.Grad, l.dw)
	if dx != nil {
		// the im2col matrix is not needed any more: it takes its gradient
		gemm32.Sgemm(blas.NoTrans, blas.Trans, n, k, l.cout, 1, dz, l.cout, l.w.Data, l.cout, 0, col, k)
		col2im(g, col, dx)
	}
}
