//go:build amd64 && !purego

package blas32

import "golang.org/x/sys/cpu"

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

// asmKernels returns the assembly kernels this CPU runs, fastest first.
func asmKernels() []*kernel {
	var fast []*kernel
	// cpu.X86.HasAVX512F is only set when the OS saves the ZMM state.
	if cpu.X86.HasAVX512F {
		fast = append(fast, &kernel{name: "avx512", mr: 12, nr: 32, fn: gemmAVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		fast = append(fast, &kernel{name: "avx2", mr: 6, nr: 16, fn: gemmAVX2})
	}
	return fast
}
