package testutil

import (
	"math"
	"testing"
)

// CompareGrad is the finite-difference verdict of the gradient tests: it
// fails t when the relative L2 error ‖ana − num‖ / max(‖ana‖, ‖num‖)
// exceeds tol or is NaN (logging the entries off by more than tol·‖num‖),
// and when the numeric gradient is identically zero, since such a test
// point checks nothing.
func CompareGrad(t testing.TB, what string, ana, num []float64, tol float64) {
	t.Helper()
	var diff, na, nn float64
	for i := range ana {
		diff += (ana[i] - num[i]) * (ana[i] - num[i])
		na += ana[i] * ana[i]
		nn += num[i] * num[i]
	}
	if nn == 0 {
		t.Fatalf("%s: numeric gradient is identically zero (test point gives no signal)", what)
	}
	rel := math.Sqrt(diff) / math.Max(math.Sqrt(na), math.Sqrt(nn))
	if rel > tol || math.IsNaN(rel) {
		for i := range ana {
			if math.Abs(ana[i]-num[i]) > tol*math.Sqrt(nn) {
				t.Logf("  [%d] analytic %.8g numeric %.8g", i, ana[i], num[i])
			}
		}
		t.Fatalf("%s: relative gradient error %.3g > %.0g", what, rel, tol)
	}
	t.Logf("%s: relative gradient error %.2g (‖g‖ = %.3g)", what, rel, math.Sqrt(na))
}
