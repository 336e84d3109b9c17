package model

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dmlbench/dmlbench/internal/blas32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/trainers/param"
)

// The CNN's convolution block: one GEMM whose im2col operand is packed
// straight from the input map (blas32.SgemmPanels; no im2col matrix is
// stored), then one fused pool+bias+ReLU pass. Maps are channels-first
// over the whole batch between blocks, so that the pixels the GEMM packs
// side by side are contiguous in memory.
//
// Layouts, for a batch of B maps of C channels, H×W pixels, pixel index
// q = (b·H + y)·W + x:
//
//	NCHW: x[b][c·H·W + y·W + x], a B×(C·H·W) matrix (the network input,
//	  and the output of the last block, so that the flatten order is that
//	  of the type comment of CNN);
//	CNHW: x[c][q], a C×(B·H·W) matrix, one plane per channel (the GEMM's
//	  output and every other map); NCHW with C = 1 is the same;
//	NHWC: x[q][c], a (B·H·W)×C matrix (the gradient of the GEMM output,
//	  for the weight gradient's right operand);
//	im2col: col[q][c·9 + ky·3 + kx] = x(b, c, y+ky−1, x+kx−1), zero outside
//	  the map (stride 1, zero padding 1), a (B·H·W)×(C·9) matrix whose column
//	  order is the row order of the conv weight. It is never stored.

// tapEdges[t] are the map edges at which tap t = ky·3 + kx reads outside
// the map (edgeTop: y = 0, edgeBottom: y = H−1, edgeLeft: x = 0,
// edgeRight: x = W−1).
const (
	edgeTop = 1 << iota
	edgeBottom
	edgeLeft
	edgeRight
)

var tapEdges = func() (e [9]uint8) {
	for t := range e {
		ky, kx := t/3, t%3
		if ky == 0 {
			e[t] |= edgeTop
		}
		if ky == 2 {
			e[t] |= edgeBottom
		}
		if kx == 0 {
			e[t] |= edgeLeft
		}
		if kx == 2 {
			e[t] |= edgeRight
		}
	}
	return e
}()

// mapEdges returns, per pixel of B maps of H×W, the edges it lies on.
func mapEdges(B, H, W int) []uint8 {
	e := make([]uint8, B*H*W)
	for q := range e {
		y, x := q/W%H, q%W
		if y == 0 {
			e[q] |= edgeTop
		}
		if y == H-1 {
			e[q] |= edgeBottom
		}
		if x == 0 {
			e[q] |= edgeLeft
		}
		if x == W-1 {
			e[q] |= edgeRight
		}
	}
	return e
}

// tapShifts returns the offset of tap t's source pixel in a map W wide:
// (ky−1)·W + (kx−1).
func tapShifts(W int) (s [9]int) {
	for t := range s {
		s[t] = (t/3-1)*W + t%3 - 1
	}
	return s
}

// im2col is the implicit im2col matrix of a CNHW map x (C planes of n
// pixels each), V[q][c·9+t] = x[c·n + q + shift[t]], zero where tap t of
// pixel q falls outside its map; as blas32.Panels it packs w pixels side by
// side (the right operand of z = Wᵀ·colᵀ). The same type serves the input
// gradient, whose taps are mirrored (package layouts, convBlock).
type im2col struct {
	x     []float32
	n     int     // pixels per plane: B·H·W
	edge  []uint8 // per pixel, mapEdges
	shift [9]int
}

// Pack implements blas32.Panels: for each block of w pixels, one contiguous
// copy per (channel, tap) from the plane, then zeros where the tap leaves
// the map (the bits of inv).
func (m im2col) Pack(dst []float32, q0, p0, n, kb, w int) {
	for g := 0; g*w < n; g++ {
		j0, nv := q0+g*w, min(w, n-g*w)
		panel := dst[g*w*kb : (g+1)*w*kb]
		var on [4]uint64 // bit r: pixel j0+r lies on that edge
		for r, e := range m.edge[j0 : j0+nv] {
			for k := range on {
				on[k] |= uint64(e>>k&1) << r
			}
		}
		pad := ^uint64(0) << nv // pixels past n: zero
		if w < 64 {
			pad &= 1<<w - 1
		}
		var inv [9]uint64
		for t, te := range tapEdges {
			inv[t] = pad
			for k := range on {
				if te>>k&1 != 0 {
					inv[t] |= on[k]
				}
			}
		}
		c, t := p0/9, p0%9
		for p := range kb {
			out := panel[p*w : p*w+w : p*w+w]
			start := c*m.n + j0 + m.shift[t]
			if start >= 0 && start+w <= len(m.x) {
				copyPixels(out, m.x[start:start+w])
				for zs := inv[t]; zs != 0; zs &= zs - 1 {
					out[bits.TrailingZeros64(zs)] = 0
				}
			} else {
				for r := range out {
					v := float32(0)
					if inv[t]>>r&1 == 0 {
						v = m.x[start+r]
					}
					out[r] = v
				}
			}
			if t++; t == 9 {
				c, t = c+1, 0
			}
		}
	}
}

// copyPixels copies src into dst (same length), through a local array for
// the kernels' register widths (a few vector moves; copy, or an array
// assignment between slices that may overlap, calls memmove).
func copyPixels(dst, src []float32) {
	switch len(dst) {
	case 32:
		v := *(*[32]float32)(src)
		*(*[32]float32)(dst) = v
	case 16:
		v := *(*[16]float32)(src)
		*(*[16]float32)(dst) = v
	case 12:
		v := *(*[12]float32)(src)
		*(*[12]float32)(dst) = v
	case 6:
		v := *(*[6]float32)(src)
		*(*[6]float32)(dst) = v
	default:
		copy(dst, src)
	}
}

// im2colT is the transpose of im2col, V[c·9+t][q], packed w (channel, tap)
// rows side by side over kb pixels: the left operand of the weight gradient
// colᵀ·dz, summed over pixels.
type im2colT struct{ im2col }

// Pack implements blas32.Panels: per pixel step, the w rows' values side
// by side, each read from its (channel, tap) source row in order.
func (m im2colT) Pack(dst []float32, i0, q0, n, kb, w int) {
	var base [64]int
	var te [64]uint8
	edge := m.edge[q0 : q0+kb]
	for g := 0; g*w < n; g++ {
		panel := dst[g*w*kb : (g+1)*w*kb]
		nv := min(w, n-g*w)
		inside := true // every source of this block lies in x
		for r := range nv {
			c, t := (i0+g*w+r)/9, (i0+g*w+r)%9
			base[r], te[r] = c*m.n+q0+m.shift[t], tapEdges[t]
			inside = inside && base[r] >= 0 && base[r]+kb <= len(m.x)
		}
		if !inside || nv < w {
			m.packSlow(panel, base[:nv], te[:nv], edge, w)
			continue
		}
		bs, ts := base[:w], te[:w]
		for p, e := range edge {
			out := panel[p*w : p*w+w]
			for r, b := range bs {
				v := m.x[b+p]
				if e&ts[r] != 0 {
					v = 0
				}
				out[r] = v
			}
		}
	}
}

// packSlow is Pack's loop for a block with rows past n or sources outside
// x (off the map: zero).
func (m im2colT) packSlow(panel []float32, base []int, te []uint8, edge []uint8, w int) {
	for p, e := range edge {
		out := panel[p*w : p*w+w]
		for r := range out {
			v := float32(0)
			if r < len(base) {
				if i := base[r] + p; i >= 0 && i < len(m.x) && e&te[r] == 0 {
					v = m.x[i]
				}
			}
			out[r] = v
		}
	}
}

// im2colRows is im2colT with its rows in tap-major order,
// V[t·C+c][q] = x(q + shift[t], channel c), read from an NHWC copy xn of
// the input ((B·H·W)×C), where the rows of one tap are C contiguous values
// per pixel: packed w rows side by side over kb pixels (the right operand of
// the weight gradient dzᵀ·col), a pixel step is one copy per tap.
type im2colRows struct {
	xn    []float32
	C     int
	edge  []uint8
	shift [9]int
}

// Pack implements blas32.Panels.
func (m im2colRows) Pack(dst []float32, i0, q0, n, kb, w int) {
	for g := 0; g*w < n; g++ {
		panel := dst[g*w*kb : (g+1)*w*kb]
		nv := min(w, n-g*w)
		if nv < w {
			clear(panel)
		}
		for r := 0; r < nv; { // runs of rows of one tap
			t, c := (i0+g*w+r)/m.C, (i0+g*w+r)%m.C
			l := min(nv-r, m.C-c)
			m.packRun(panel, r, l, w, t, c, q0, kb)
			r += l
		}
	}
}

// packRun writes rows r..r+l−1 of a panel w wide, tap t, channels c.., for
// pixels q0..q0+kb−1.
func (m im2colRows) packRun(panel []float32, r, l, w, t, c, q0, kb int) {
	te, s, C := tapEdges[t], m.shift[t], m.C
	for p, e := range m.edge[q0 : q0+kb] {
		out := panel[p*w+r : p*w+r+l]
		if e&te != 0 { // off the map
			for k := range out {
				out[k] = 0
			}
			continue
		}
		copyPixels(out, m.xn[(q0+p+s)*C+c:][:l])
	}
}

// toNHWC copies the batch x (layout g) into the NHWC dst, maps b0..b1−1.
func toNHWC(g geom, x, dst []float32, b0, b1 int) {
	C, hw := g.C, g.H*g.W
	for b := b0; b < b1; b++ {
		out := dst[b*hw*C:][:hw*C]
		for c := range C {
			src := x[(c*g.B+b)*hw:][:hw]
			if g.nchw {
				src = x[(b*C+c)*hw:][:hw]
			}
			for q, v := range src {
				out[q*C+c] = v
			}
		}
	}
}

// geom is the geometry of a block input.
type geom struct {
	B, C, H, W int
	nchw       bool // the input layout: NCHW (the network input), or CNHW
}

func (g geom) String() string {
	l := "CNHW"
	if g.nchw {
		l = "NCHW"
	}
	return fmt.Sprintf("%d×%d×%d×%d %s", g.B, g.C, g.H, g.W, l)
}

// toPlanes copies the NCHW batch x of B maps into the CNHW dst.
func toPlanes(g geom, x, dst []float32) {
	hw := g.H * g.W
	for b := range g.B {
		for c := range g.C {
			copy(dst[(c*g.B+b)*hw:][:hw], x[(b*g.C+c)*hw:][:hw])
		}
	}
}

// fromPlanes copies the CNHW src of B maps into the NCHW dst.
func fromPlanes(g geom, src, dst []float32) {
	hw := g.H * g.W
	for b := range g.B {
		for c := range g.C {
			copy(dst[(b*g.C+c)*hw:][:hw], src[(c*g.B+b)*hw:][:hw])
		}
	}
}

// pool is out = max(0, max_window z + bias[c]) over non-overlapping 2×2
// windows (stride 2, no padding, trailing odd row/column dropped) of the
// CNHW GEMM output z (C planes of B·H·W) and the bias (1×C). Adding a
// per-channel constant commutes with the window maximum, and ReLU
// (monotone) with both, so this is ReLU(MaxPool(conv + bias)) in one pass.
// The output is CNHW (C planes of B·H/2·W/2), or NCHW (B×(C·H/2·W/2)) when
// chw is set (the last block, for the flatten order). Its gradient routes
// each pooled pixel's gradient to its window's first maximum when the
// output is positive (ReLU), else nowhere; the bias gradient is, per
// channel, the sum of the gradients of the positive outputs in ascending
// (b, y, x). Both passes run map by map, channel by channel, so that z, the
// output and their gradients are read and written in order (the NHWC
// gradient of z a map at a time, in cache).
type pool struct {
	B, C, H, W int // of z
	chw        bool
}

func (op pool) ho() int { return op.H / 2 }
func (op pool) wo() int { return op.W / 2 }

// outRow is the output offset of pooled pixel (b, c, oy, 0).
func (op pool) outRow(b, c, oy int) int {
	if op.chw {
		return ((b*op.C+c)*op.ho() + oy) * op.wo()
	}
	return ((c*op.B+b)*op.ho() + oy) * op.wo()
}

// forward writes the pooled pixels of maps b0..b1−1: per channel the
// window maximum, plus the bias, through ReLU; arg (in the order of o)
// gets the window position of the first maximum, for backward. Go's
// branch-free max (random data makes a compare-and-branch chain mispredict
// about once per compare) equals the first-maximum compare chain except
// for signed zeros (−0 vs +0, numerically equal) and NaN, which max
// propagates from any window position.
func (op pool) forward(z, bias, o []float32, arg []uint8, b0, b1 int) {
	H, W, ho, wo := op.H, op.W, op.ho(), op.wo()
	hw, n := H*W, op.B*H*W
	for b := b0; b < b1; b++ {
		for c := range op.C {
			bc := bias[c]
			zc := z[c*n+b*hw:][:hw]
			ob := op.outRow(b, c, 0)
			out, ac := o[ob:][:ho*wo], arg[ob:][:ho*wo]
			for oy := range ho {
				r0, r1 := zc[2*oy*W:][:2*wo], zc[(2*oy+1)*W:][:2*wo]
				row, ar := out[oy*wo:][:wo], ac[oy*wo:][:wo]
				for ox := range row {
					v0, v1, v2, v3 := r0[2*ox], r0[2*ox+1], r1[2*ox], r1[2*ox+1]
					m := max(max(v0, v1), max(v2, v3))
					row[ox] = max(m+bc, 0)
					// the index of the first v == m (3 if none: NaN)
					n0, n1, n2 := b2i(v0 != m), b2i(v1 != m), b2i(v2 != m)
					ar[ox] = uint8(n0 * (1 + n1*(1+n2)))
				}
			}
		}
	}
}

// backward writes the gradient of z for maps b0..b1−1 into dz (NHWC)
// and, when not nil, dzc (CNHW, as z): each pooled pixel's gradient goes to
// the window position arg holds when the output is positive (ReLU), zero
// elsewhere. Written without data-dependent branches (random data
// mispredicts them).
func (op pool) backward(o []float32, arg []uint8, gr, dz, dzc []float32, b0, b1 int) {
	C, H, W, ho, wo := op.C, op.H, op.W, op.ho(), op.wo()
	hw, n := H*W, op.B*H*W
	clear(dz[b0*hw*C : b1*hw*C])
	if dzc != nil {
		for c := range C {
			clear(dzc[c*n+b0*hw : c*n+b1*hw])
		}
	}
	for b := b0; b < b1; b++ {
		db := dz[b*hw*C:][:hw*C]
		for c := range C {
			ob := op.outRow(b, c, 0)
			oc, gc, ac := o[ob:][:ho*wo], gr[ob:][:ho*wo], arg[ob:][:ho*wo]
			var pc []float32 // channel c of map b in dzc
			if dzc != nil {
				pc = dzc[c*n+b*hw:][:hw]
			}
			for oy := range ho {
				for ox, v := range oc[oy*wo : oy*wo+wo] {
					i := oy*wo + ox
					k := int(ac[i])
					q := (2*oy+k>>1)*W + 2*ox + k&1 // pixel in the map
					g := math.Float32frombits(math.Float32bits(gc[i]) & -uint32(b2i(v > 0)))
					db[q*C+c] = g
					if pc != nil {
						pc[q] = g
					}
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

// biasGrad writes the bias gradient of channels c0..c1−1 of the output o
// and its gradient gr into db.
func (op pool) biasGrad(o, gr, db []float32, c0, c1 int) {
	hw := op.ho() * op.wo()
	for c := c0; c < c1; c++ {
		s := float32(0)
		for b := range op.B {
			off := op.outRow(b, c, 0)
			for i, v := range o[off : off+hw] {
				s += math.Float32frombits(math.Float32bits(gr[off+i]) & -uint32(b2i(v > 0))) // + 0 where v ≤ 0: s unchanged
			}
		}
		db[c] = s
	}
}

// parallelBatch runs f over [0, B) split into one contiguous range per
// worker (GOMAXPROCS of them at most). The steps write disjoint outputs per
// range, so the numbers do not depend on the split.
func parallelBatch(B int, f func(b0, b1 int)) {
	t := min(parallel.Threads(0), B)
	if t <= 1 {
		f(0, B)
		return
	}
	per := (B + t - 1) / t
	parallel.For(t, (B+per-1)/per, func(i int) { f(i*per, min((i+1)*per, B)) })
}

// gemmPanels computes the convolutions' products.
var gemmPanels = blas32.Implementation{}

// convBlock is ReLU(MaxPool2×2(Conv3×3(x; W) + b)) on a batch of maps of
// cin channels, H×W pixels: z = Wᵀ·colᵀ (CNHW) with the (cin·9)×cout weight
// and the implicit im2col matrix of x, then the fused pool. Its gradient:
// dz and the bias from the pool, dW += colᵀ·dz (summed over pixels in
// ascending order, as Sgemm sums the stored matrices), and dx = the full
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
