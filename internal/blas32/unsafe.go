package blas32

import "unsafe"

// unsafeSlice views n values from p (the kernels take pointers so
// that the assembly ones can share the signature).
func unsafeSlice[T elem](p *T, n int) []T { return unsafe.Slice(p, n) }
