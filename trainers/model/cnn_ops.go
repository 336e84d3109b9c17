package model

import (
	"math"

	"github.com/dmlbench/dmlbench/internal/blas32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/trainers/param"
)

// gemmPanels computes the convolutions' products.
var gemmPanels = blas32.Implementation{}

// convBlock is ReLU(MaxPool2×2(Conv3×3(x; W) + b)) on a batch of maps of
// cin channels, H×W pixels: z = Wᵀ·colᵀ (CNHW) with the (cin·9)×cout weight
// and the implicit im2col matrix of x, then the fused pool. Its gradient:
// dz and the bias from the pool, dW += colᵀ·dz (weightGrad, or
// weightGradPooled for the first block), and dx = the full
// convolution of dz with the mirrored weight,
// dx[c][q] = Σ_{o,t} W[c·9+8−t][o]·dz[q + shift(t)][o], one GEMM with the
// implicit im2col matrix of dz (tap t of pixel q reads q − shift(8−t)).
type convBlock struct {
	w, b    *param.Param
	in      geom // B is the chunk; forward and backward use their rows
	cout    int
	chw     bool
	edge    []uint8 // mapEdges of the chunk's maps
	shift   [9]int
	xc, dxc []float32 // the input and its gradient in CNHW, when the input is NCHW with cin > 1
	xn      []float32 // the input in NHWC, for the weight gradient (weightGrad)
	z       []float32 // GEMM output, CNHW
	arg     []uint8   // the window position of each pooled maximum (pool.forward)
	dz, dzc []float32 // its gradient, NHWC (for dW) and CNHW (as z, for dx)
	wd      []float32 // the mirrored weight of dx, cin×(cout·9)
	dw, db  []float32 // the gradients of one pass
	dwh     []float32 // the weight gradient's two halves (weightGrad)
}

func newConvBlock(w, b *param.Param, in geom, chw bool) *convBlock {
	cout := w.Shape[1]
	n := in.B * in.H * in.W
	l := &convBlock{w: w, b: b, in: in, cout: cout, chw: chw, edge: mapEdges(in.B, in.H, in.W), shift: tapShifts(in.W),
		z: make([]float32, n*cout), arg: make([]uint8, in.B*(in.H/2)*(in.W/2)*cout), dz: make([]float32, n*cout), dw: make([]float32, len(w.Data)), db: make([]float32, cout)}
	if in.nchw && in.C > 1 {
		l.xc = make([]float32, n*in.C)
	}
	return l
}

// outWidth is the width of one output row (one map).
func (l *convBlock) outWidth() int { return l.cout * (l.in.H / 2) * (l.in.W / 2) }

func (l *convBlock) geom(rows int) (geom, pool) {
	g := l.in
	g.B = rows
	return g, pool{B: rows, C: l.cout, H: g.H, W: g.W, chw: l.chw}
}

// cols is the implicit im2col matrix of the input x of rows maps.
func (l *convBlock) cols(g geom, x []float32) im2col {
	n := g.B * g.H * g.W
	if l.xc != nil {
		toPlanes(g, x, l.xc[:n*g.C])
		x = l.xc[:n*g.C]
	}
	return im2col{x: x[:n*g.C], n: n, edge: l.edge[:n], shift: l.shift}
}

// forwardChunk is the number of z values one forward chunk of maps
// produces at most (512 kB: the chunk's product stays in L2 for its pool).
const forwardChunk = 1 << 17

// forward runs the GEMM and the pool a chunk of maps at a time, the chunks
// spread over the threads, so that z goes to the pool from cache rather
// than memory. Every z value is one Sgemm sum whatever the chunk, so the
// numbers do not depend on the split.
func (l *convBlock) forward(x []float32, rows int, y []float32) {
	g, p := l.geom(rows)
	hw := g.H * g.W
	n := rows * hw
	z := l.z[:n*l.cout]
	cols, wt := l.cols(g, x), blas32.Matrix(l.w.Data, l.cout, true)
	bias := l.b.Data
	arg := l.arg[:rows*(g.H/2)*(g.W/2)*l.cout]
	per := max(1, forwardChunk/(hw*l.cout))
	serial := blas32.Implementation{Threads: 1}
	parallel.For(0, (rows+per-1)/per, func(i int) {
		b0, b1 := i*per, min((i+1)*per, rows)
		serial.SgemmPanels(l.cout, (b1-b0)*hw, g.C*9, 1, wt, pixelRows{cols, b0 * hw}, z[b0*hw:], n)
		p.forward(z, bias, y, arg, b0, b1)
	})
}

// pixelRows is p with its rows (pixels) starting at lo.
type pixelRows struct {
	p  blas32.Panels
	lo int
}

// Pack implements blas32.Panels.
func (f pixelRows) Pack(dst []float32, i0, p0, n, kb, w int) { f.p.Pack(dst, f.lo+i0, p0, n, kb, w) }

// pooledMaxC is the most input channels for which a block without an input
// gradient takes its weight gradient from the pooled gradient
// (weightGradPooled) rather than a GEMM with the 3/4-zero dz.
const pooledMaxC = 3

func (l *convBlock) backward(x, y, dy []float32, rows int, dx []float32) {
	g, p := l.geom(rows)
	n := rows * g.H * g.W
	arg := l.arg[:rows*(g.H/2)*(g.W/2)*l.cout]
	parallelBatch(l.cout, func(c0, c1 int) { p.biasGrad(y, dy, l.db, c0, c1) })
	addTo(l.b.Grad, l.db)
	if dx == nil && g.C <= pooledMaxC {
		l.weightGradPooled(g, p, x, y, dy, arg)
		return
	}
	dz := l.dz[:n*l.cout]
	var dzc []float32
	if dx != nil {
		if l.dzc == nil {
			l.dzc = make([]float32, len(l.z))
		}
		dzc = l.dzc[:n*l.cout]
	}
	parallelBatch(rows, func(b0, b1 int) { p.backward(y, arg, dy, dz, dzc, b0, b1) })
	l.weightGrad(g, x, dz)
	if dx != nil {
		l.inputGrad(g, dzc, dx)
	}
}

// weightGradPooled adds colᵀ·dz to the weight's gradient straight from the
// pooled gradient: dz is non-zero only at each window's first maximum q*,
// where it is the pooled gradient g if the output is positive, so
// dW[c·9+t][o] = Σ g·x(c, q* + shift(t)) over the pooled outputs of
// channel o in ascending (b, y, x) order (each product rounded, then
// added; a tap that leaves the map adds +0). One output channel per step,
// in parallel (the numbers do not depend on the split).
func (l *convBlock) weightGradPooled(g geom, p pool, x, y, dy []float32, arg []uint8) {
	cols := l.cols(g, x)
	cout := l.cout
	parallelBatch(cout, func(o0, o1 int) {
		for o := o0; o < o1; o++ {
			for c := range g.C {
				acc := tapSums(g, p, cols, cols.x[c*cols.n:][:cols.n], y, dy, o, arg)
				for t, v := range acc {
					l.dw[(c*9+t)*cout+o] = v
				}
			}
		}
	})
	addTo(l.w.Grad, l.dw)
}

// tapSums is weightGradPooled's sum for output channel o and one input
// plane xc, the nine taps in registers.
func tapSums(g geom, p pool, cols im2col, xc, y, dy []float32, o int, arg []uint8) [9]float32 {
	W, hw, ho, wo := g.W, g.H*g.W, g.H/2, g.W/2
	var a0, a1, a2, a3, a4, a5, a6, a7, a8 float32
	for b := range g.B {
		ob := p.outRow(b, o, 0)
		for oy := range ho {
			row := ob + oy*wo
			for ox, v := range y[row : row+wo] {
				gv := math.Float32frombits(math.Float32bits(dy[row+ox]) & -uint32(b2i(v > 0)))
				k := int(arg[row+ox])
				q := b*hw + (2*oy+k>>1)*W + 2*ox + k&1
				if e := cols.edge[q]; e != 0 { // a tap leaves the map: those add +0
					var pr [9]float32
					for t, te := range tapEdges {
						if e&te == 0 {
							pr[t] = float32(gv * xc[q+cols.shift[t]])
						}
					}
					a0, a1, a2, a3, a4, a5, a6, a7, a8 = a0+pr[0], a1+pr[1], a2+pr[2], a3+pr[3], a4+pr[4], a5+pr[5], a6+pr[6], a7+pr[7], a8+pr[8]
					continue
				}
				r := xc[q-W-1:][:2*W+3]
				a0, a1, a2 = a0+float32(gv*r[0]), a1+float32(gv*r[1]), a2+float32(gv*r[2])
				a3, a4, a5 = a3+float32(gv*r[W]), a4+float32(gv*r[W+1]), a5+float32(gv*r[W+2])
				a6, a7, a8 = a6+float32(gv*r[2*W]), a7+float32(gv*r[2*W+1]), a8+float32(gv*r[2*W+2])
			}
		}
	}
	return [9]float32{a0, a1, a2, a3, a4, a5, a6, a7, a8}
}

// weightGrad adds colᵀ·dz to the weight's gradient. The sum over pixels
// runs as two fixed halves in parallel (split at a multiple of 256 pixels
// whatever the thread count, so that the numbers do not depend on it; each
// half sums in ascending pixel order, then the halves are added), so that
// neither goroutine packs all of either operand. With 16k channels a half
// is dzᵀ·col with tap-major rows (im2colRows: a pixel step packs whole runs
// of channels), added back in the weight's row order; else colᵀ·dz with
// im2colT. Both give the same bits.
func (l *convBlock) weightGrad(g geom, x, dz []float32) {
	n, k, C, cout := g.B*g.H*g.W, g.C*9, g.C, l.cout
	tapMajor := C%16 == 0
	var cols blas32.Panels
	if tapMajor {
		if l.xn == nil {
			l.xn = make([]float32, len(l.z)/cout*C)
		}
		xn := l.xn[:n*C]
		parallelBatch(g.B, func(b0, b1 int) { toNHWC(g, x, xn, b0, b1) })
		cols = im2colRows{xn: xn, C: C, edge: l.edge[:n], shift: l.shift}
	} else {
		cols = im2colT{l.cols(g, x)}
	}
	if l.dwh == nil {
		l.dwh = make([]float32, 2*len(l.dw))
	}
	half := min(n, (n/2+255)/256*256)
	impl := blas32.Implementation{Threads: max(1, parallel.Threads(0)/2)}
	parallel.For(2, 2, func(h int) {
		lo, hi := 0, half
		if h == 1 {
			lo, hi = half, n
		}
		out := l.dwh[h*len(l.dw):][:len(l.dw)]
		dzh, colsh := blas32.Matrix(dz[lo*cout:], cout, true), fromPixel{cols, lo}
		if tapMajor {
			impl.SgemmPanels(cout, k, hi-lo, 1, dzh, colsh, out, k)
		} else {
			impl.SgemmPanels(k, cout, hi-lo, 1, colsh, dzh, out, cout)
		}
	})
	d0, d1 := l.dwh[:len(l.dw)], l.dwh[len(l.dw):]
	for i := range l.dw {
		l.dw[i] = d0[i] + d1[i]
	}
	if !tapMajor {
		addTo(l.w.Grad, l.dw)
		return
	}
	for c := range C {
		for t := range 9 {
			grad := l.w.Grad[(c*9+t)*cout:][:cout]
			for o := range grad {
				grad[o] += l.dw[o*k+t*C+c]
			}
		}
	}
}

// fromPixel is p with its summed index (pixels) starting at lo.
type fromPixel struct {
	p  blas32.Panels
	lo int
}

// Pack implements blas32.Panels.
func (f fromPixel) Pack(dst []float32, i0, p0, n, kb, w int) { f.p.Pack(dst, i0, f.lo+p0, n, kb, w) }

// inputGrad writes dx, the full convolution of dz with the mirrored weight:
// Wd[c][o·9+t] = W[c·9+8−t][o] times the implicit im2col matrix of dz.
func (l *convBlock) inputGrad(g geom, dz, dx []float32) {
	n, cout := g.B*g.H*g.W, l.cout
	if l.wd == nil {
		l.wd = make([]float32, g.C*cout*9)
	}
	w := l.w.Data
	for c := range g.C {
		row := l.wd[c*cout*9:][:cout*9]
		for o := range cout {
			for t := range 9 {
				row[o*9+t] = w[(c*9+8-t)*cout+o]
			}
		}
	}
	out := dx[:n*g.C]
	if l.xc != nil {
		if l.dxc == nil {
			l.dxc = make([]float32, len(l.xc))
		}
		out = l.dxc[:n*g.C]
	}
	cols := im2col{x: dz, n: n, edge: l.edge[:n], shift: l.shift}
	gemmPanels.SgemmPanels(g.C, n, cout*9, 1, blas32.Matrix(l.wd, cout*9, false), cols, out, n)
	if l.xc != nil {
		fromPlanes(g, out, dx)
	}
}
