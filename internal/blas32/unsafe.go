package blas32

import "unsafe"

// unsafeSlice views n float32 values from p (the kernels take pointers so
// that the assembly ones can share the signature).
func unsafeSlice(p *float32, n int) []float32 { return unsafe.Slice(p, n) }
