package knn

// SquaredL2 is the squared Euclidean distance ‖a − b‖² of two vectors of
// the same length, each difference and the running sum in float64, in index
// order: the reference value for checks and small computations (samplers,
// centroid drift), rounded the same way wherever it is used. The search
// kernels compute their float32 values differently (see Exact).
func SquaredL2(a, b []float32) float64 {
	var s float64
	for t := range a {
		d := float64(a[t]) - float64(b[t])
		s += d * d
	}
	return s
}
