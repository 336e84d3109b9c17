//go:build amd64 && !purego

package blas32

import "github.com/dmlbench/dmlbench/internal/kernelsel"

// gemmAVX512 is the 12×32 AVX-512 micro-kernel (kernel_avx512_amd64.s):
// 24 ZMM accumulators, broadcast-from-memory VFMADD231PS.
//
//go:noescape
func gemmAVX512(a, b, c *float32, kc, ldc, add int, alpha float32)

// gemmAVX2 is the 6×16 AVX2+FMA micro-kernel (kernel_avx2_amd64.s): 12
// YMM accumulators, VBROADCASTSS + VFMADD231PS.
//
//go:noescape
func gemmAVX2(a, b, c *float32, kc, ldc, add int, alpha float32)

// dgemmAVX512 is the float64 12×16 AVX-512 micro-kernel.
//
//go:noescape
func dgemmAVX512(a, b, c *float64, kc, ldc, add int, alpha float64)

// dgemmAVX2 is the float64 6×8 AVX2+FMA micro-kernel.
//
//go:noescape
func dgemmAVX2(a, b, c *float64, kc, ldc, add int, alpha float64)

// asmKernels returns the assembly kernels this CPU runs, fastest first,
// by the same CPU-feature test as the k-NN and k-means kernels
// (internal/kernelsel).
func asmKernels() []*kernel {
	var fast []*kernel
	if kernelsel.Supported(kernelsel.AVX512) {
		fast = append(fast, &kernel{name: "avx512", level: kernelsel.AVX512, s: tile[float32]{12, 32, gemmAVX512}, d: tile[float64]{12, 16, dgemmAVX512}})
	}
	if kernelsel.Supported(kernelsel.AVX2) {
		fast = append(fast, &kernel{name: "avx2", level: kernelsel.AVX2, s: tile[float32]{6, 16, gemmAVX2}, d: tile[float64]{6, 8, dgemmAVX2}})
	}
	return fast
}
