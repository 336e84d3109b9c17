//go:build amd64 && !purego

package knn

import "github.com/dmlbench/dmlbench/internal/kernelsel"

// kern6x16AVX2 is the AVX2+FMA kernel (kernel_amd64.s): 12 YMM accumulators,
// VBROADCASTSS of the 6 query values per step, VFMADD231PS.
//
//go:noescape
func kern6x16AVX2(a, b *float32, kc int, ep *kernEpi)

// kern6x32AVX512 is the AVX-512F kernel (kernel_amd64.s): the same 6-row
// outer product over 32 database items, 12 ZMM accumulators.
//
//go:noescape
func kern6x32AVX512(a, b *float32, kc int, ep *kernEpi)

func init() {
	var asm []kernelImpl
	if kernelsel.Supported(kernelsel.AVX512) {
		asm = append(asm, kernelImpl{name: "avx512 asm 6x32", nr: 32, level: kernelsel.AVX512, fn: kern6x32AVX512})
	}
	if kernelsel.Supported(kernelsel.AVX2) {
		asm = append(asm, kernelImpl{name: "avx2-fma asm 6x16", nr: 16, level: kernelsel.AVX2, fn: kern6x16AVX2})
	}
	kernels = append(asm, kernels...)
}
