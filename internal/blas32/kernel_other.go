//go:build !amd64 || purego

package blas32

// asmKernels: no assembly kernels outside amd64 (or with -tags purego).
func asmKernels() []*kernel { return nil }
