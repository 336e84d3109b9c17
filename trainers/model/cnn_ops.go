package model

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The CNN's own Gorgonia ops. Gorgonia's Conv2d path (Im2Col on a 4-D
// tensor, a reshape, the bias as a broadcast add, a 4-D transpose back to
// channels-first, MaxPool2D, Rectify) walks most of its data through
// tensor's generic iterators and spends far more time there than in the
// GEMM. These ops keep the maps channels-last between blocks, so a block is
// im2col → one GEMM (Gorgonia's Mul, i.e. the project's Sgemm) → one fused
// pool+bias+ReLU pass, and each op and its gradient is one tight loop over
// preallocated memory (no per-element allocation, no iterator).
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

// geom is the geometry shared by the ops of one block.
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

// inShape is the 2-D shape of the block's input.
func (g geom) inShape() tensor.Shape {
	if g.nhwc {
		return tensor.Shape{g.B * g.H * g.W, g.C}
	}
	return tensor.Shape{g.B, g.C * g.H * g.W}
}

func (g geom) String() string {
	l := "NCHW"
	if g.nhwc {
		l = "NHWC"
	}
	return fmt.Sprintf("%d×%d×%d×%d %s", g.B, g.C, g.H, g.W, l)
}

func matType() hm.Type { return &G.TensorType{Dims: 2, Of: hm.TypeVariable('a')} }

func hashOf(s fmt.Stringer) uint32 {
	h := fnv.New32a()
	fmt.Fprint(h, s.String())
	return h.Sum32()
}

// f32 returns the []float32 backing of v with at least n values.
func f32(v G.Value, n int, what string) ([]float32, error) {
	t, ok := v.(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("%s: got %T, want a tensor", what, v)
	}
	d, ok := t.Data().([]float32)
	if !ok {
		return nil, fmt.Errorf("%s: got %T data, want []float32", what, t.Data())
	}
	if len(d) < n {
		return nil, fmt.Errorf("%s: %d values, want %d", what, len(d), n)
	}
	return d[:n], nil
}

// newOut returns prealloc if it is a float32 tensor of shape s, else a
// new one (Gorgonia may offer a register of another shape).
func newOut(prealloc G.Value, s tensor.Shape) G.Value {
	if t, ok := prealloc.(tensor.Tensor); ok && t.Dtype() == tensor.Float32 && t.Shape().Eq(s) {
		return prealloc
	}
	return tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(s...))
}

// opBase holds the boilerplate of Gorgonia's Op interface.
type opBase struct{}

func (opBase) ReturnsPtr() bool     { return false }
func (opBase) CallsExtern() bool    { return false }
func (opBase) OverwritesInput() int { return -1 }

// ---- im2col ----

// im2colOp maps a block input (layout of geom) to its im2col matrix.
type im2colOp struct {
	opBase
	g geom
	// grad is false for the network input, whose gradient nobody reads.
	grad bool
}

func (op im2colOp) Arity() int                                     { return 1 }
func (op im2colOp) Type() hm.Type                                  { return hm.NewFnType(matType(), matType()) }
func (op im2colOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.outShape(), nil }
func (op im2colOp) outShape() tensor.Shape                         { return tensor.Shape{op.g.B * op.g.H * op.g.W, op.g.C * 9} }
func (op im2colOp) String() string                                 { return "Im2Col3×3{" + op.g.String() + "}" }
func (op im2colOp) WriteHash(h hash.Hash)                          { fmt.Fprint(h, op.String()) }
func (op im2colOp) Hashcode() uint32                               { return hashOf(op) }
func (op im2colOp) Do(in ...G.Value) (G.Value, error)              { return op.UsePreallocDo(nil, in...) }
func (op im2colOp) DiffWRT(int) []bool                             { return []bool{op.grad} }

func (op im2colOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	g := op.g
	x, err := f32(in[0], g.B*g.C*g.H*g.W, "im2col input")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, op.outShape())
	col, err := f32(out, g.B*g.H*g.W*g.C*9, "im2col output")
	if err != nil {
		return nil, err
	}
	im2col(g, x, col)
	return out, nil
}

func (op im2colOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(col2imOp{g: op.g}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
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

// col2imOp is im2col's adjoint: the gradient of the block input, each
// pixel the sum of the im2col entries that copied it (col2im).
type col2imOp struct {
	opBase
	g geom
}

func (op col2imOp) Arity() int                                     { return 1 }
func (op col2imOp) Type() hm.Type                                  { return hm.NewFnType(matType(), matType()) }
func (op col2imOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.g.inShape(), nil }
func (op col2imOp) String() string                                 { return "Col2Im3×3{" + op.g.String() + "}" }
func (op col2imOp) WriteHash(h hash.Hash)                          { fmt.Fprint(h, op.String()) }
func (op col2imOp) Hashcode() uint32                               { return hashOf(op) }
func (op col2imOp) Do(in ...G.Value) (G.Value, error)              { return op.UsePreallocDo(nil, in...) }

func (op col2imOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	g := op.g
	K := g.C * 9
	col, err := f32(in[0], g.B*g.H*g.W*K, "col2im input")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, g.inShape())
	dx, err := f32(out, g.B*g.C*g.H*g.W, "col2im output")
	if err != nil {
		return nil, err
	}
	col2im(g, col, dx)
	return out, nil
}

// ---- 2×2 max-pool + bias + ReLU ----

// poolOp is out = max(0, max_window z + bias[c]) over non-overlapping 2×2
// windows (stride 2, no padding, trailing odd row/column dropped) of the
// channels-last GEMM output z ((B·H·W)×C) and the bias (1×C). Adding a
// per-channel constant commutes with the window maximum, and ReLU (monotone)
// with both, so this is ReLU(MaxPool(conv + bias)) in one pass. The output
// is channels-last ((B·H/2·W/2)×C), or channels-first (B×(C·H/2·W/2)) when
// chw is set (the last block, for the flatten order).
type poolOp struct {
	opBase
	g   geom // of z: B, C (= cout), H, W; nhwc is ignored (always NHWC)
	chw bool
}

func (op poolOp) ho() int { return op.g.H / 2 }
func (op poolOp) wo() int { return op.g.W / 2 }
func (op poolOp) outShape() tensor.Shape {
	g := op.g
	if op.chw {
		return tensor.Shape{g.B, g.C * op.ho() * op.wo()}
	}
	return tensor.Shape{g.B * op.ho() * op.wo(), g.C}
}

// outAt is the output offset of pooled pixel (b, c, oy, ox).
func (op poolOp) outAt(b, c, oy, ox int) int {
	if op.chw {
		return ((b*op.g.C+c)*op.ho()+oy)*op.wo() + ox
	}
	return ((b*op.ho()+oy)*op.wo()+ox)*op.g.C + c
}

func (op poolOp) Arity() int                                     { return 2 }
func (op poolOp) Type() hm.Type                                  { return hm.NewFnType(matType(), matType(), matType()) }
func (op poolOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.outShape(), nil }
func (op poolOp) String() string {
	return fmt.Sprintf("MaxPool2×2+Bias+ReLU{%s chw=%v}", op.g, op.chw)
}
func (op poolOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op poolOp) Hashcode() uint32                  { return hashOf(op) }
func (op poolOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }
func (op poolOp) DiffWRT(int) []bool                { return []bool{true, true} }

func (op poolOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	g := op.g
	z, err := f32(in[0], g.B*g.H*g.W*g.C, "pool input")
	if err != nil {
		return nil, err
	}
	bias, err := f32(in[1], g.C, "pool bias")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, op.outShape())
	o, err := f32(out, g.B*op.ho()*op.wo()*g.C, "pool output")
	if err != nil {
		return nil, err
	}
	parallelBatch(g.B, func(b0, b1 int) { op.forward(z, bias, o, b0, b1) })
	return out, nil
}

// window returns the offsets in z of the 2×2 window of pooled pixel
// (b, oy, ox), channel 0, in row-major window order.
func (op poolOp) window(b, oy, ox int) (p0, p1, p2, p3 int) {
	C, W := op.g.C, op.g.W
	p0 = ((b*op.g.H+2*oy)*W + 2*ox) * C
	return p0, p0 + C, p0 + W*C, p0 + W*C + C
}

// forward writes the pooled pixels of maps b0..b1−1: per channel the
// window maximum, plus the bias, through ReLU.
func (op poolOp) forward(z, bias, o []float32, b0, b1 int) {
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
func (op poolOp) backward(z, o, gr, dz []float32, b0, b1 int) {
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

func (op poolOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dz, err := G.ApplyOp(poolGradOp{p: op}, inputs[0], output, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(poolBiasGradOp{p: op}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, db}, nil
}

// poolGradOp is ∂/∂z of poolOp: each pooled pixel's gradient goes to its
// window's first maximum when the output is positive (ReLU), else nowhere.
type poolGradOp struct {
	opBase
	p poolOp
}

func (op poolGradOp) Arity() int    { return 3 }
func (op poolGradOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), matType(), matType()) }
func (op poolGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	g := op.p.g
	return tensor.Shape{g.B * g.H * g.W, g.C}, nil
}
func (op poolGradOp) String() string                    { return "∂z " + op.p.String() }
func (op poolGradOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op poolGradOp) Hashcode() uint32                  { return hashOf(op) }
func (op poolGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

func (op poolGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	g := op.p.g
	nz, no := g.B*g.H*g.W*g.C, g.B*op.p.ho()*op.p.wo()*g.C
	z, err := f32(in[0], nz, "pool-grad input")
	if err != nil {
		return nil, err
	}
	o, err := f32(in[1], no, "pool-grad output")
	if err != nil {
		return nil, err
	}
	gr, err := f32(in[2], no, "pool-grad gradient")
	if err != nil {
		return nil, err
	}
	s, _ := op.InferShape()
	out := newOut(prealloc, s)
	dz, err := f32(out, nz, "pool-grad result")
	if err != nil {
		return nil, err
	}
	parallelBatch(g.B, func(b0, b1 int) {
		per := g.H * g.W * g.C // one map of z
		clear(dz[b0*per : b1*per])
		op.p.backward(z, o, gr, dz, b0, b1)
	})
	return out, nil
}

// poolBiasGradOp is ∂/∂bias of poolOp: per channel, the sum of the
// gradients of the positive outputs (ascending output offset).
type poolBiasGradOp struct {
	opBase
	p poolOp
}

func (op poolBiasGradOp) Arity() int    { return 2 }
func (op poolBiasGradOp) Type() hm.Type { return hm.NewFnType(matType(), matType(), matType()) }
func (op poolBiasGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1, op.p.g.C}, nil
}
func (op poolBiasGradOp) String() string                    { return "∂bias " + op.p.String() }
func (op poolBiasGradOp) WriteHash(h hash.Hash)             { fmt.Fprint(h, op.String()) }
func (op poolBiasGradOp) Hashcode() uint32                  { return hashOf(op) }
func (op poolBiasGradOp) Do(in ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, in...) }

func (op poolBiasGradOp) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	p := op.p
	C := p.g.C
	no := p.g.B * p.ho() * p.wo() * C
	o, err := f32(in[0], no, "pool-bias-grad output")
	if err != nil {
		return nil, err
	}
	gr, err := f32(in[1], no, "pool-bias-grad gradient")
	if err != nil {
		return nil, err
	}
	out := newOut(prealloc, tensor.Shape{1, C})
	db, err := f32(out, C, "pool-bias-grad result")
	if err != nil {
		return nil, err
	}
	clear(db)
	if p.chw {
		hw := p.ho() * p.wo()
		for i := 0; i < no; i++ {
			if o[i] > 0 {
				db[(i/hw)%C] += gr[i]
			}
		}
		return out, nil
	}
	for i := 0; i < no; i += C {
		oi, gi := o[i:i+C], gr[i:i+C]
		for c := range oi {
			if oi[c] > 0 {
				db[c] += gi[c]
			}
		}
	}
	return out, nil
}

// parallelBatch runs f over [0, B) split into one contiguous range of maps
// per goroutine (GOMAXPROCS of them at most). The ops write disjoint
// outputs per map, so the numbers do not depend on the split.
func parallelBatch(B int, f func(b0, b1 int)) {
	t := min(runtime.GOMAXPROCS(0), B)
	if t <= 1 {
		f(0, B)
		return
	}
	var wg sync.WaitGroup
	per := (B + t - 1) / t
	for lo := per; lo < B; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+per, B))
	}
	f(0, min(per, B))
	wg.Wait()
}
