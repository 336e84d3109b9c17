//go:build !amd64 || purego

package trainers

const adamVector = false

// adamUpdate is adamScalar where no assembly exists.
func adamUpdate(k *adamConsts, data, grad, m, v []float32, lo, hi int) float64 {
	return adamScalar(k, data, grad, m, v, lo, hi)
}
