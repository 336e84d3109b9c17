package knn

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestMeanPairwiseL2 compares the blocked reduction with a float64 double
// loop on sizes that exercise partial 6-row blocks and 16-column panels.
func TestMeanPairwiseL2(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, c := range []struct{ n, d int }{{2, 1}, {3, 5}, {7, 16}, {17, 37}, {100, 128}, {301, 3}} {
		x := randMatrix(rng, c.n, c.d, "gauss")
		want, pairs := 0.0, 0
		for i := 0; i < c.n; i++ {
			for j := i + 1; j < c.n; j++ {
				want += math.Sqrt(exactDist(x.Row(i), x.Row(j), L2))
				pairs++
			}
		}
		want /= float64(pairs)
		for _, threads := range []int{1, 3} {
			got, err := MeanPairwiseL2(context.Background(), x, threads)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-5*want {
				t.Errorf("n=%d d=%d threads=%d: %v, float64 loop %v", c.n, c.d, threads, got, want)
			}
		}
	}
	// Hand case: the corners (0,0), (3,0), (0,4): distances 3, 4, 5 → mean 4.
	x := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{0, 0, 3, 0, 0, 4}}
	if got, _ := MeanPairwiseL2(context.Background(), x, 2); math.Abs(got-4) > 1e-6 {
		t.Errorf("3-4-5 triangle: mean %v, want 4", got)
	}
	if got, _ := MeanPairwiseL2(context.Background(), mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{1, 2}}, 1); !math.IsNaN(got) {
		t.Errorf("one row: %v, want NaN", got)
	}
}

func BenchmarkMeanPairwiseL2_12k(b *testing.B) {
	x := gaussUnit(12100, 128, 4)
	var got float64
	for b.Loop() {
		var err error
		if got, err = MeanPairwiseL2(context.Background(), x, 0); err != nil {
			b.Fatal(err)
		}
	}
	// Independent unit vectors in 128-D: ‖a − b‖ = √(2 − 2a·b) ≈ √2.
	if math.Abs(got-math.Sqrt2) > 0.01 {
		b.Fatalf("mean pairwise distance %v, want ≈ √2", got)
	}
	b.ReportMetric(float64(x.Rows)*float64(x.Rows)*float64(x.Cols)/1e9/(b.Elapsed().Seconds()/float64(b.N)), "eff-Gflop/s")
}
