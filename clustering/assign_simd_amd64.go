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

// laneIota holds the lane offsets 0..15 of a 16-centroid panel.
var laneIota = [2][8]int32{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}}
