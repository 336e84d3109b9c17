//go:build amd64 && !purego

package trainers

import "github.com/dmlbench/dmlbench/internal/kernelsel"

// adamAVX2 is Adam.Step's update of n elements (n a multiple of 4) in AVX2,
// bit-identical to adamScalar (adam_amd64.s); it returns the sum of the
// gradients.
//
//go:noescape
func adamAVX2(data, grad, m, v *float32, n int, k *adamConsts) float64

// adamVector reports whether Adam.Step runs adamAVX2 (DMLBENCH_KERNEL
// portable keeps the Go loop).
var adamVector = kernelsel.Chosen() >= kernelsel.AVX2

// adamUpdate runs adamAVX2 on the longest multiple of 4 in [lo, hi) and the
// Go loop on the rest.
func adamUpdate(k *adamConsts, data, grad, m, v []float32, lo, hi int) float64 {
	var sum float64
	if n := (hi - lo) &^ 3; adamVector && n > 0 {
		sum = adamAVX2(&data[lo], &grad[lo], &m[lo], &v[lo], n, k)
		lo += n
	}
	return sum + adamScalar(k, data, grad, m, v, lo, hi)
}
