package model

import (
	"math"
	"testing"
)

// TestGeZero checks the branch-free x ≥ 0 mask of the ReLU gradient on
// the edge cases.
func TestGeZero(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		v    float32
		want bool
	}{{1, true}, {0, true}, {float32(math.Copysign(0, -1)), true}, {-1, false}, {1e-45, true}, {-1e-45, false},
		{float32(math.Inf(1)), true}, {float32(math.Inf(-1)), false}, {nan, false}, {-nan, false}} {
		if got := geZero(c.v) == 0xffffffff; got != c.want || (!got && geZero(c.v) != 0) {
			t.Errorf("geZero(%v) = %#x, want ≥ 0: %v", c.v, geZero(c.v), c.want)
		}
	}
}
