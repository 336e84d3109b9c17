//go:build goexperiment.simd && amd64

package clustering

import (
	"simd/archsimd"
	"unsafe"
)

func init() {
	if archsimd.X86.AVX2() && archsimd.X86.FMA() {
		argminTile = argminTile4x16
		kernelName = "avx2-fma-4x16"
		expandRow = expandRowAVX2
		boundsTile = boundsTile4x16
		boundsRows = boundsRows4x16
		lbDecay = lbDecayAVX
		groupArgmin = groupArgminAVX
		lbMask = lbMaskAVX
	}
}

// expandRowAVX2 is expandRowGeneric with one broadcast store per value.
func expandRowAVX2(dst, row []float32) float32 {
	if len(row) == 0 {
		return 0
	}
	if len(dst) < (len(row)-1)*tileRows*lanes+lanes {
		panic("clustering: expandRowAVX2 destination too short") // internal invariant
	}
	p := unsafe.Pointer(&dst[0])
	for t, v := range row {
		archsimd.BroadcastFloat32x8(v).Store((*[8]float32)(unsafe.Add(p, t*tileRows*lanes*4)))
	}
	// Leave AVX state clean before scalar (SSE) float code: mixing them with
	// dirty upper halves cost ~100 ns per value on the test machine.
	archsimd.ClearAVXUpperBits()
	return rowNorm32(row)
}

// argminTile4x16 is argminTileGeneric with the 4×16 block held in eight
// Float32x8 accumulators: per dimension it loads the 16 centroid values (two
// vectors) and the four pre-broadcast row values, and issues 8 fused
// multiply-adds. Measured ≈ 50 Gflop/s per core on the 2-core AVX2 test
// machine; 5×16 and 6×16 variants (10 and 12 accumulators, enough to hide
// the FMA latency) were slower because Go's register allocator spills them
// (X15 is reserved, leaving 15 vector registers).
func argminTile4x16(r, c, cn []float32, j0 int32, best []float32, bidx []int32, d int) {
	var s00, s01, s10, s11, s20, s21, s30, s31 archsimd.Float32x8
	// r and c must extend past the tile (packPad) so that the pointers bumped
	// after the last step still point into their allocation.
	if d <= 0 || len(r) <= d*tileRows*lanes || len(c) <= d*tileCols || len(cn) < tileCols ||
		len(best) < tileRows*tileCols || len(bidx) < tileRows*tileCols {
		panic("clustering: argminTile4x16 called with short buffers") // internal invariant
	}
	// Unsafe pointer walk: the lengths were checked above, and Go's slice
	// re-slicing (or unsafe.Add from a base, which the compiler does not fold
	// into the addressing mode) costs more integer work than the 8 FMAs.
	rp := unsafe.Pointer(&r[0])
	cp := unsafe.Pointer(&c[0])
	const rs, cs = tileRows * lanes * 4, tileCols * 4 // bytes per dimension
	t := 0
	for ; t+2 <= d; t += 2 {

		c0 := archsimd.LoadFloat32x8((*[8]float32)(cp))
		c1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, 32)))
		x := archsimd.LoadFloat32x8((*[8]float32)(rp))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 32)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 64)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 96)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
		c0 = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, cs)))
		c1 = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, cs+32)))
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs)))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs+32)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs+64)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs+96)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
		rp = unsafe.Add(rp, 2*rs)
		cp = unsafe.Add(cp, 2*cs)
	}
	if t < d {

		c0 := archsimd.LoadFloat32x8((*[8]float32)(cp))
		c1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, 32)))
		x := archsimd.LoadFloat32x8((*[8]float32)(rp))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 32)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 64)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 96)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
	}
	cnp := (*[tileCols]float32)(cn)
	n0 := archsimd.LoadFloat32x8((*[8]float32)(cnp[0:8]))
	n1 := archsimd.LoadFloat32x8((*[8]float32)(cnp[8:16]))
	m2 := archsimd.BroadcastFloat32x8(-2)
	id0 := archsimd.BroadcastInt32x8(j0).Add(archsimd.LoadInt32x8(&laneIota[0]))
	id1 := archsimd.BroadcastInt32x8(j0).Add(archsimd.LoadInt32x8(&laneIota[1]))
	bp := (*[tileRows * tileCols]float32)(best)
	ip := (*[tileRows * tileCols]int32)(bidx)
	upd := func(s archsimd.Float32x8, n archsimd.Float32x8, id archsimd.Int32x8, o int) {
		bv := archsimd.LoadFloat32x8((*[8]float32)(bp[o : o+8]))
		bi := archsimd.LoadInt32x8((*[8]int32)(ip[o : o+8]))
		v := s.MulAdd(m2, n)
		lt := v.Less(bv)
		v.Merge(bv, lt).Store((*[8]float32)(bp[o : o+8]))
		id.Merge(bi, lt).Store((*[8]int32)(ip[o : o+8]))
	}
	upd(s00, n0, id0, 0)
	upd(s01, n1, id1, 8)
	upd(s10, n0, id0, 16)
	upd(s11, n1, id1, 24)
	upd(s20, n0, id0, 32)
	upd(s21, n1, id1, 40)
	upd(s30, n0, id0, 48)
	upd(s31, n1, id1, 56)
	archsimd.ClearAVXUpperBits()
}

// boundsTile4x16 is boundsTileGeneric on AVX2+FMA. Its accumulation loop is
// argminTile4x16's, written out again on purpose: moving it into a shared
// function that returns the eight accumulators cost 25% of the kernel's
// throughput (132 vs 170 Gflop/s, BenchmarkNearestCentroids; the vectors go
// through memory). It is argminTile4x16's loop instruction for instruction (one VFMADD per dimension
// and lane, d in increasing order, from zero), and its value is the same
// s·(−2) + ‖c‖² fused step, so every value equals the one argminTile4x16
// computes for the same (row, centroid) bits: the pruned assignment
// recombines values of both kernels.
func boundsTile4x16(r, c, cn []float32, ids []int32, best []float32, bidx []int32, d int) {
	var s00, s01, s10, s11, s20, s21, s30, s31 archsimd.Float32x8
	// r and c must extend past the tile (packPad) so that the pointers bumped
	// after the last step still point into their allocation.
	if d <= 0 || len(r) <= d*tileRows*lanes || len(c) <= d*tileCols || len(cn) < tileCols ||
		len(best) < tileRows*tileCols || len(bidx) < tileRows*tileCols ||
		len(ids) < tileCols {
		panic("clustering: boundsTile4x16 called with short buffers") // internal invariant
	}
	// Unsafe pointer walk: the lengths were checked above, and Go's slice
	// re-slicing (or unsafe.Add from a base, which the compiler does not fold
	// into the addressing mode) costs more integer work than the 8 FMAs.
	rp := unsafe.Pointer(&r[0])
	cp := unsafe.Pointer(&c[0])
	const rs, cs = tileRows * lanes * 4, tileCols * 4 // bytes per dimension
	t := 0
	for ; t+2 <= d; t += 2 {

		c0 := archsimd.LoadFloat32x8((*[8]float32)(cp))
		c1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, 32)))
		x := archsimd.LoadFloat32x8((*[8]float32)(rp))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 32)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 64)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 96)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
		c0 = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, cs)))
		c1 = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, cs+32)))
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs)))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs+32)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs+64)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, rs+96)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
		rp = unsafe.Add(rp, 2*rs)
		cp = unsafe.Add(cp, 2*cs)
	}
	if t < d {

		c0 := archsimd.LoadFloat32x8((*[8]float32)(cp))
		c1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, 32)))
		x := archsimd.LoadFloat32x8((*[8]float32)(rp))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 32)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 64)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(rp, 96)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
	}
	boundsEpilogue(s00, s01, s10, s11, s20, s21, s30, s31, cn, ids, best, bidx)
}

// boundsEpilogue is the common end of the bounds kernels: v = s·(−2) + ‖c‖²
// (argminTile4x16's fused step) and the best/bidx/m1/m2 updates.
func boundsEpilogue(s00, s01, s10, s11, s20, s21, s30, s31 archsimd.Float32x8, cn []float32, ids []int32, best []float32, bidx []int32) {
	cnp := (*[tileCols]float32)(cn)
	n0 := archsimd.LoadFloat32x8((*[8]float32)(cnp[0:8]))
	n1 := archsimd.LoadFloat32x8((*[8]float32)(cnp[8:16]))
	mm2 := archsimd.BroadcastFloat32x8(-2)
	idp := (*[tileCols]int32)(ids)
	id0 := archsimd.LoadInt32x8((*[8]int32)(idp[0:8]))
	id1 := archsimd.LoadInt32x8((*[8]int32)(idp[8:16]))
	bp := (*[tileRows * tileCols]float32)(best)
	ip := (*[tileRows * tileCols]int32)(bidx)
	upd := func(s archsimd.Float32x8, n archsimd.Float32x8, id archsimd.Int32x8, o int) {
		v := s.MulAdd(mm2, n)
		bv := archsimd.LoadFloat32x8((*[8]float32)(bp[o : o+8]))
		bi := archsimd.LoadInt32x8((*[8]int32)(ip[o : o+8]))
		lt := v.Less(bv).Or(v.Equal(bv).And(id.Less(bi)))
		v.Merge(bv, lt).Store((*[8]float32)(bp[o : o+8]))
		id.Merge(bi, lt).Store((*[8]int32)(ip[o : o+8]))
	}
	upd(s00, n0, id0, 0)
	upd(s01, n1, id1, 8)
	upd(s10, n0, id0, 16)
	upd(s11, n1, id1, 24)
	upd(s20, n0, id0, 32)
	upd(s21, n1, id1, 40)
	upd(s30, n0, id0, 48)
	upd(s31, n1, id1, 56)
	archsimd.ClearAVXUpperBits()
}

// boundsRows4x16 is boundsTile4x16 reading the four rows straight from
// their storage and broadcasting each value in the loop instead of loading
// a pre-broadcast copy: the same FMA per (dimension, row, centroid) in the
// same order, hence the same bits, without the 4 KiB-per-row expansion that
// the pruned passes, which use a tile for only a few panels, cannot
// amortise.
func boundsRows4x16(x0, x1, x2, x3, c, cn []float32, ids []int32, best []float32, bidx []int32, d int) {
	var s00, s01, s10, s11, s20, s21, s30, s31 archsimd.Float32x8
	if d <= 0 || len(x0) < d || len(x1) < d || len(x2) < d || len(x3) < d || len(c) < d*tileCols || len(cn) < tileCols ||
		len(best) < tileRows*tileCols || len(bidx) < tileRows*tileCols ||
		len(ids) < tileCols {
		panic("clustering: boundsRows4x16 called with short buffers") // internal invariant
	}
	p0, p1, p2, p3 := unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&x2[0]), unsafe.Pointer(&x3[0])
	cp := unsafe.Pointer(&c[0])
	const cs = tileCols * 4 // bytes per dimension of a panel
	t := 0
	for ; t+2 <= d; t += 2 {
		c0 := archsimd.LoadFloat32x8((*[8]float32)(cp))
		c1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, 32)))
		x := archsimd.BroadcastFloat32x8(*(*float32)(p0))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.BroadcastFloat32x8(*(*float32)(p1))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.BroadcastFloat32x8(*(*float32)(p2))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.BroadcastFloat32x8(*(*float32)(p3))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
		c0 = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, cs)))
		c1 = archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, cs+32)))
		x = archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(p0, 4)))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(p1, 4)))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(p2, 4)))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(p3, 4)))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
		if t+2 < d { // keep the pointers inside their allocations
			p0, p1, p2, p3 = unsafe.Add(p0, 8), unsafe.Add(p1, 8), unsafe.Add(p2, 8), unsafe.Add(p3, 8)
			cp = unsafe.Add(cp, 2*cs)
		}
	}
	if t < d { // odd d: the pointers were bumped to the last dimension
		c0 := archsimd.LoadFloat32x8((*[8]float32)(cp))
		c1 := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(cp, 32)))
		x := archsimd.BroadcastFloat32x8(*(*float32)(p0))
		s00 = x.MulAdd(c0, s00)
		s01 = x.MulAdd(c1, s01)
		x = archsimd.BroadcastFloat32x8(*(*float32)(p1))
		s10 = x.MulAdd(c0, s10)
		s11 = x.MulAdd(c1, s11)
		x = archsimd.BroadcastFloat32x8(*(*float32)(p2))
		s20 = x.MulAdd(c0, s20)
		s21 = x.MulAdd(c1, s21)
		x = archsimd.BroadcastFloat32x8(*(*float32)(p3))
		s30 = x.MulAdd(c0, s30)
		s31 = x.MulAdd(c1, s31)
	}
	boundsEpilogue(s00, s01, s10, s11, s20, s21, s30, s31, cn, ids, best, bidx)
}

// lbDecayAVX is lbDecayGeneric eight lanes at a time (same float32
// operations, so the same bits).
func lbDecayAVX(dst, src, delta []float32) {
	n := len(dst)
	if len(src) < n || len(delta) < n {
		panic("clustering: lbDecayAVX called with short buffers") // internal invariant
	}
	down := archsimd.BroadcastFloat32x8(lbDown)
	zero := archsimd.BroadcastFloat32x8(0)
	g := 0
	for ; g+8 <= n; g += 8 {
		a := archsimd.LoadFloat32x8((*[8]float32)(src[g : g+8]))
		b := archsimd.LoadFloat32x8((*[8]float32)(delta[g : g+8]))
		a.Sub(b).Mul(down).Max(zero).Store((*[8]float32)(dst[g : g+8]))
	}
	archsimd.ClearAVXUpperBits()
	lbDecayGeneric(dst[g:], src[g:n], delta[g:n])
}

// groupArgminAVX is groupArgminGeneric folding lanes 16 → 8 → 4 → 2 → 1
// in registers (lexicographic selects; lane swaps by shuffles).
func groupArgminAVX(best []float32, bidx []int32, out *[tileRows]float32, oid *[tileRows]int32) {
	bp := (*[tileRows * tileCols]float32)(best)
	ip := (*[tileRows * tileCols]int32)(bidx)
	for r := 0; r < tileRows; r++ {
		o := r * tileCols
		v0 := archsimd.LoadFloat32x8((*[8]float32)(bp[o : o+8]))
		v1 := archsimd.LoadFloat32x8((*[8]float32)(bp[o+8 : o+16]))
		i0 := archsimd.LoadInt32x8((*[8]int32)(ip[o : o+8]))
		i1 := archsimd.LoadInt32x8((*[8]int32)(ip[o+8 : o+16]))
		lt := v1.Less(v0).Or(v1.Equal(v0).And(i1.Less(i0)))
		v8, i8 := v1.Merge(v0, lt), i1.Merge(i0, lt)
		v, i := v8.GetLo(), i8.GetLo()
		w, j := v8.GetHi(), i8.GetHi()
		m := w.Less(v).Or(w.Equal(v).And(j.Less(i)))
		v, i = w.Merge(v, m), j.Merge(i, m)
		w, j = v.SelectFromPair(1, 0, 3, 2, v), i.SelectFromPair(1, 0, 3, 2, i)
		m = w.Less(v).Or(w.Equal(v).And(j.Less(i)))
		v, i = w.Merge(v, m), j.Merge(i, m)
		w, j = v.SelectFromPair(2, 3, 0, 1, v), i.SelectFromPair(2, 3, 0, 1, i)
		m = w.Less(v).Or(w.Equal(v).And(j.Less(i)))
		v, i = w.Merge(v, m), j.Merge(i, m)
		out[r], oid[r] = v.GetElem(0), i.GetElem(0)
	}
	archsimd.ClearAVXUpperBits()
}

// lbMaskAVX is lbMaskGeneric eight groups at a time.
func lbMaskAVX(lb []float32, tau float32, mask []uint64) {
	n := len(lb)
	if len(mask)*64 < n {
		panic("clustering: lbMaskAVX mask too short") // internal invariant
	}
	t := archsimd.BroadcastFloat32x8(tau)
	g := 0
	for ; g+8 <= n; g += 8 {
		bits := archsimd.LoadFloat32x8((*[8]float32)(lb[g : g+8])).LessEqual(t).ToBits()
		mask[g>>6] |= uint64(bits) << (g & 63)
	}
	archsimd.ClearAVXUpperBits()
	for ; g < n; g++ {
		if lb[g] <= tau {
			mask[g>>6] |= 1 << (g & 63)
		}
	}
}

// laneIota holds the lane offsets 0..15 of a 16-centroid panel.
var laneIota = [2][8]int32{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}}
