package clustering

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/knn"
)

func randMatrix(rng *rand.Rand, n, d int) knn.Matrix {
	data := make([]float32, n*d)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	return knn.Matrix{Rows: n, Cols: d, Data: data}
}

// naiveNearest is the float64 reference: argmin_j ‖x−c_j‖², lowest j on ties.
func naiveNearest(x, c knn.Matrix) ([]int32, []float64) {
	a := make([]int32, x.Rows)
	ds := make([]float64, x.Rows)
	for i := 0; i < x.Rows; i++ {
		best := math.Inf(1)
		for j := 0; j < c.Rows; j++ {
			var s float64
			for t := 0; t < x.Cols; t++ {
				e := float64(x.Data[i*x.Cols+t]) - float64(c.Data[j*c.Cols+t])
				s += e * e
			}
			if s < best {
				best, a[i] = s, int32(j)
			}
		}
		ds[i] = best
	}
	return a, ds
}

func TestNearestCentroidsMatchesNaive(t *testing.T) {
	ks := kernels()
	defer func() { argminTile = ks[len(ks)-1] }()
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct{ n, k, d int }{{1, 1, 1}, {17, 7, 3}, {300, 13, 5}, {517, 50, 33}, {40, 200, 128}} {
		x := randMatrix(rng, tc.n, tc.d)
		c := randMatrix(rng, tc.k, tc.d)
		want, wd := naiveNearest(x, c)
		for _, kern := range ks {
			argminTile = kern
			for _, th := range []int{1, 3} {
				got, gd, err := NearestCentroids(context.Background(), x, c, th)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if got[i] != want[i] {
						// Only a float32 near-tie may differ.
						if math.Abs(sqdist(x.Row(i), c.Row(int(got[i])))-wd[i]) > 1e-4*(1+wd[i]) {
							t.Fatalf("%+v kernel %s row %d: got %d want %d", tc, KernelName(), i, got[i], want[i])
						}
					}
					if math.Abs(float64(gd[i])-wd[i]) > 1e-4*(1+wd[i]) {
						t.Fatalf("%+v row %d: dist %v want %v", tc, i, gd[i], wd[i])
					}
				}
			}
		}
	}
}

func TestNearestCentroidsTiesLowestIndex(t *testing.T) {
	// Duplicate centroids: the lower index must win, for every kernel.
	x := knn.Matrix{Rows: 3, Cols: 2, Data: []float32{0, 0, 1, 1, 5, 5}}
	c := knn.Matrix{Rows: 8, Cols: 2, Data: []float32{9, 9, 1, 1, 0, 0, 1, 1, 0, 0, 5, 5, 5, 5, 9, 9}}
	ks := kernels()
	defer func() { argminTile = ks[len(ks)-1] }()
	for _, kern := range ks {
		argminTile = kern
		got, _, err := NearestCentroids(context.Background(), x, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 2 || got[1] != 1 || got[2] != 5 {
			t.Fatalf("ties: got %v want [2 1 5]", got)
		}
	}
}

func TestNearestCentroidsErrors(t *testing.T) {
	x := knn.Matrix{Rows: 2, Cols: 2, Data: []float32{0, 0, 1, 1}}
	if _, _, err := NearestCentroids(context.Background(), x, knn.Matrix{Rows: 1, Cols: 3, Data: make([]float32, 3)}, 1); err == nil {
		t.Fatal("dimension mismatch accepted")
	}
	if _, _, err := NearestCentroids(context.Background(), x, knn.Matrix{Cols: 2}, 1); err == nil {
		t.Fatal("no centroids accepted")
	}
	if _, _, err := NearestCentroids(context.Background(), knn.Matrix{Rows: 2, Cols: 2, Data: make([]float32, 3)}, x, 1); err == nil {
		t.Fatal("ragged data accepted")
	}
}

func sqdist(a, b []float32) float64 {
	var s float64
	for i := range a {
		e := float64(a[i]) - float64(b[i])
		s += e * e
	}
	return s
}

// kernels lists the generic kernel and, last, the active one (call it
// before changing argminTile).
func kernels() []func(a, c, cn []float32, j0 int32, best []float32, bidx []int32, d int) {
	return []func(a, c, cn []float32, j0 int32, best []float32, bidx []int32, d int){argminTileGeneric, argminTile}
}

func BenchmarkNearestCentroids(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := randMatrix(rng, 8192, 128)
	c := randMatrix(rng, 2048, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := NearestCentroids(context.Background(), x, c, 0); err != nil {
			b.Fatal(err)
		}
	}
	flop := 2 * 8192.0 * 2048 * 128 * float64(b.N)
	b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "Gflop/s")
	b.Logf("kernel %s", KernelName())
}

// BenchmarkNearestCentroidsSOP is one k-means assignment pass at Stanford
// Online Products scale (60 502 × 11 316 × 128: 175 Gflop).
func BenchmarkNearestCentroidsSOP(b *testing.B) {
	if testing.Short() {
		b.Skip("SOP-scale assignment skipped in -short")
	}
	rng := rand.New(rand.NewSource(1))
	x := randMatrix(rng, 60502, 128)
	c := randMatrix(rng, 11316, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := NearestCentroids(context.Background(), x, c, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*60502.0*11316*128*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflop/s")
}
