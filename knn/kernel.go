package knn

import (
	"math"
	"unsafe"
)

// Micro-kernel contract shared by every implementation (portable Go,
// archsimd, AVX2 assembly).
//
// The kernel computes one mr×nr = 6×16 block of distances. Its inputs are
// packed panels:
//
//	a: query panel, kc steps of mr values   a[p*mr + r] = q[row r][p]
//	b: database panel, kc steps of nr values b[p*nr + j] = x[item j][p]
//
// so at step p the kernel broadcasts the 6 query values and multiplies them
// with the 16 database values that sit side by side in vector lanes (an
// outer-product update of 12 eight-lane accumulators). The accumulation over
// p is sequential per (r, j) in ascending p, so acc(r, j) does not depend on
// where the pair sits inside a block or tile, and acc(q_i, x_j) =
// acc(q_j, x_i) (products commute): the symmetric driver relies on this.
//
// The epilogue turns inner products into the internal "smaller is closer"
// distance
//
//	L2: D = max(0, (‖q‖² + ‖x‖²) − 2·q·x)    (norm expansion, clamped at 0)
//	IP: D = max(−Inf, (0 + 0) − 1·q·x) = −q·x (negated, so ascending = best)
//
// i.e. D = max(lo, (nq[r] + nx[j]) + scale·acc) with (scale, lo) = (−2, 0) or
// (−1, −Inf). NaN propagates (never a neighbour). It then compares every D
// with the row threshold thr[r] (rmask[r] bit j = D[r][j] <= thr[r]) and with
// the column threshold cthr[j] (cmask bit j = some r has D[r][j] <= cthr[j]),
// so the caller touches its top-k structures only for lanes that can enter.
const (
	mr = 6
	nr = 16
)

// kernEpi is the kernel's epilogue block. The assembly kernel addresses it by
// the byte offsets noted on each field (checked by TestKernEpiLayout).
type kernEpi struct {
	c     [mr * nr]float32 // 0:   D values, row-major 6×16
	nq    [8]float32       // 384: query-side norms (rows 0..5)
	thr   [8]float32       // 416: row thresholds
	scale [8]float32       // 448: scale broadcast to 8 lanes
	lo    [8]float32       // 480: lower clamp broadcast to 8 lanes
	nx    *float32         // 512: 16 database-side norms
	cthr  *float32         // 520: 16 column thresholds
	rmask [8]uint32        // 528: per-row lane masks (16 bits used)
	cmask uint32           // 560: column mask (16 bits)
}

// kernelFunc computes one 6×16 block: see the contract above.
type kernelFunc func(a, b *float32, kc int, ep *kernEpi)

// kernelImpl names a micro-kernel implementation.
type kernelImpl struct {
	name string
	fn   kernelFunc
}

// portableKernel is the pure-Go kernel: one row × 4 columns of independent
// scalar accumulators per pass over p, each a sequential sum in ascending p
// like the SIMD kernels (up to FMA vs separate rounding).
var portableKernel = kernelImpl{name: "portable 6x16", fn: kern6x16Go}

// kernels lists the implementations usable on this machine, best first.
// Build-tagged files prepend SIMD kernels in init.
var kernels = []kernelImpl{portableKernel}

// activeKernel is the kernel Exact uses.
func activeKernel() kernelImpl { return kernels[0] }

// KernelName reports which distance micro-kernel this binary uses on this CPU,
// e.g. "avx2-fma asm 6x16" or "portable 6x16".
func KernelName() string { return activeKernel().name }

func kern6x16Go(a, b *float32, kc int, ep *kernEpi) {
	var A, B []float32
	if kc > 0 {
		A = unsafe.Slice(a, kc*mr)
		B = unsafe.Slice(b, kc*nr)
	}
	var acc [mr * nr]float32
	// One row × 4 columns = 4 scalar accumulators per pass over p (more
	// spill with Go's register allocator), each a sequential sum over p.
	for r := 0; r < mr; r++ {
		for j := 0; j < nr; j += 4 {
			var s0, s1, s2, s3 float32
			ai := r
			for bi := j; bi+3 < len(B); bi += nr {
				av := A[ai]
				bp := (*[4]float32)(B[bi : bi+4])
				s0 += av * bp[0]
				s1 += av * bp[1]
				s2 += av * bp[2]
				s3 += av * bp[3]
				ai += mr
			}
			o := r*nr + j
			acc[o], acc[o+1], acc[o+2], acc[o+3] = s0, s1, s2, s3
		}
	}
	nx := unsafe.Slice(ep.nx, nr)
	cthr := unsafe.Slice(ep.cthr, nr)
	scale, lo := ep.scale[0], ep.lo[0]
	var cm uint32
	for r := 0; r < mr; r++ {
		var rm uint32
		for j := 0; j < nr; j++ {
			d := (ep.nq[r] + nx[j]) + scale*acc[r*nr+j]
			if d < lo {
				d = lo
			}
			ep.c[r*nr+j] = d
			if d <= ep.thr[r] {
				rm |= 1 << uint(j)
			}
			if d <= cthr[j] {
				cm |= 1 << uint(j)
			}
		}
		ep.rmask[r] = rm
	}
	ep.cmask = cm
}

// alignedFloats returns a zeroed slice of n float32 whose first element is
// 64-byte aligned (whole panels then never straddle cache lines).
func alignedFloats(n int) []float32 {
	buf := make([]float32, n+16)
	off := 0
	if len(buf) > 0 {
		off = int((64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64 / 4)
	}
	return buf[off : off+n : off+n]
}

// packPanel writes rows [r0, r0+w) of m (fewer if the matrix ends; missing
// rows are zero) into dst interleaved: dst[p*w + r] = m[r0+r][p].
func packPanel(dst []float32, m Matrix, r0, w int) {
	kc := m.Cols
	dst = dst[:kc*w]
	n := min(w, m.Rows-r0)
	if n < w {
		clear(dst)
	}
	for r := 0; r < n; r++ {
		row := m.Data[(r0+r)*kc : (r0+r+1)*kc]
		for p, v := range row {
			dst[p*w+r] = v
		}
	}
}

// sqNorms returns ‖row‖² for every row, accumulated in float64 and rounded
// once, padded with zeros to length padTo.
func sqNorms(m Matrix, padTo int) []float32 {
	out := make([]float32, max(padTo, m.Rows))
	for i := 0; i < m.Rows; i++ {
		var s float64
		for _, v := range m.Row(i) {
			s += float64(v) * float64(v)
		}
		out[i] = float32(s)
	}
	return out
}

// fill8 returns v in all 8 lanes.
func fill8(v float32) (o [8]float32) {
	for i := range o {
		o[i] = v
	}
	return o
}

var negInf = float32(math.Inf(-1))
var posInf = float32(math.Inf(1))
