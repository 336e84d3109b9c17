//go:build goexperiment.simd && amd64

package knn

import (
	"simd/archsimd"
	"unsafe"
)

// kern6x16AVX2 is the assembly kernel (kernel_avx2_amd64.s): 12 YMM
// accumulators, VBROADCASTSS of the 6 query values per step, VFMADD231PS.
//
//go:noescape
func kern6x16AVX2(a, b *float32, kc int, ep *kernEpi)

func init() {
	if archsimd.X86.AVX2() && archsimd.X86.FMA() {
		kernels = append([]kernelImpl{
			{name: "avx2-fma asm 6x16", fn: kern6x16AVX2},
			{name: "avx2-fma archsimd 6x16", fn: kern6x16Archsimd},
		}, kernels...)
	}
}

type f32x8 = archsimd.Float32x8

func ld8(p unsafe.Pointer) f32x8 { return archsimd.LoadFloat32x8((*[8]float32)(p)) }

// kern6x16Archsimd is the same kernel written with simd/archsimd
// (Float32x8.MulAdd). It is correct and portable across GOAMD64 levels but
// Go 1.26's register allocator spills on this 12-accumulator shape with only
// 16 YMM registers (and must copy operands around the destructive
// VFMADD213PS form), so it runs at roughly half the speed of the assembly
// kernel; it is kept as a cross-check and for BenchmarkKernel.
func kern6x16Archsimd(a, b *float32, kc int, ep *kernEpi) {
	var c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51 f32x8
	pa, pb := unsafe.Pointer(a), unsafe.Pointer(b)
	for p := 0; p < kc; p++ {
		b0 := ld8(pb)
		b1 := ld8(unsafe.Add(pb, 32))
		av := (*[mr]float32)(pa)
		a0 := archsimd.BroadcastFloat32x8(av[0])
		c00 = a0.MulAdd(b0, c00)
		c01 = a0.MulAdd(b1, c01)
		a1 := archsimd.BroadcastFloat32x8(av[1])
		c10 = a1.MulAdd(b0, c10)
		c11 = a1.MulAdd(b1, c11)
		a2 := archsimd.BroadcastFloat32x8(av[2])
		c20 = a2.MulAdd(b0, c20)
		c21 = a2.MulAdd(b1, c21)
		a3 := archsimd.BroadcastFloat32x8(av[3])
		c30 = a3.MulAdd(b0, c30)
		c31 = a3.MulAdd(b1, c31)
		a4 := archsimd.BroadcastFloat32x8(av[4])
		c40 = a4.MulAdd(b0, c40)
		c41 = a4.MulAdd(b1, c41)
		a5 := archsimd.BroadcastFloat32x8(av[5])
		c50 = a5.MulAdd(b0, c50)
		c51 = a5.MulAdd(b1, c51)
		pa = unsafe.Add(pa, mr*4)
		pb = unsafe.Add(pb, nr*4)
	}
	nx0 := ld8(unsafe.Pointer(ep.nx))
	nx1 := ld8(unsafe.Add(unsafe.Pointer(ep.nx), 32))
	ct0 := ld8(unsafe.Pointer(ep.cthr))
	ct1 := ld8(unsafe.Add(unsafe.Pointer(ep.cthr), 32))
	scale := archsimd.LoadFloat32x8(&ep.scale)
	lo := archsimd.LoadFloat32x8(&ep.lo)
	var cm uint32
	epi := func(r int, x0, x1 f32x8) {
		n := archsimd.BroadcastFloat32x8(ep.nq[r])
		d0 := lo.Max(x0.MulAdd(scale, n.Add(nx0)))
		d1 := lo.Max(x1.MulAdd(scale, n.Add(nx1)))
		d0.Store((*[8]float32)(ep.c[r*nr:]))
		d1.Store((*[8]float32)(ep.c[r*nr+8:]))
		t := archsimd.BroadcastFloat32x8(ep.thr[r])
		ep.rmask[r] = uint32(d0.LessEqual(t).ToBits()) | uint32(d1.LessEqual(t).ToBits())<<8
		cm |= uint32(d0.LessEqual(ct0).ToBits()) | uint32(d1.LessEqual(ct1).ToBits())<<8
	}
	epi(0, c00, c01)
	epi(1, c10, c11)
	epi(2, c20, c21)
	epi(3, c30, c31)
	epi(4, c40, c41)
	epi(5, c50, c51)
	ep.cmask = cm
}
