package knn

import (
	"math"
	"testing"
)

// SquaredL2 sums float64 differences: exact where float32 arithmetic would
// round (1e8 + 1 is not a float32).
func TestSquaredL2(t *testing.T) {
	if got := SquaredL2([]float32{1, 2, 3}, []float32{4, 6, 3}); got != 25 {
		t.Fatalf("(1,2,3)–(4,6,3): %v, want 25", got)
	}
	if got := SquaredL2(nil, nil); got != 0 {
		t.Fatalf("empty: %v", got)
	}
	a, b := []float32{1e8, 0.5}, []float32{-1, 0}
	want := math.Pow(1e8+1, 2) + 0.25
	if got := SquaredL2(a, b); got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}
