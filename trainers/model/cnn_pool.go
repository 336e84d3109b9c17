package model

import (
	"math"

	"github.com/dmlbench/dmlbench/internal/parallel"
)

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
