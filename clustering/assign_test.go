package clustering

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

func randMatrix(rng *rand.Rand, n, d int) mat32.Matrix {
	data := make([]float32, n*d)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}
}

// naiveNearest is the float64 reference: argmin_j ‖x−c_j‖², lowest j on ties.
func naiveNearest(x, c mat32.Matrix) ([]int32, []float64) {
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

// forEachLevel runs f with the kernels of every level (AVX-512, AVX2,
// portable), skipping those this CPU lacks, and restores the chosen level.
func forEachLevel(t *testing.T, f func(t *testing.T)) {
	defer useKernels(kernelsel.Chosen())
	for _, l := range []kernelsel.Level{kernelsel.AVX512, kernelsel.AVX2, kernelsel.Portable} {
		t.Run(l.String(), func(t *testing.T) {
			if !useKernels(l) {
				t.Skipf("this CPU or build lacks the %s kernels", l)
			}
			f(t)
		})
	}
}

func TestNearestCentroidsMatchesNaive(t *testing.T) {
	forEachLevel(t, testNearestCentroidsMatchesNaive)
}

func testNearestCentroidsMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct{ n, k, d int }{{1, 1, 1}, {17, 7, 3}, {300, 13, 5}, {517, 50, 33}, {40, 200, 128}, {70, 131, 16}} {
		x := randMatrix(rng, tc.n, tc.d)
		c := randMatrix(rng, tc.k, tc.d)
		want, wd := naiveNearest(x, c)
		var first []int32
		{
			for _, th := range []int{1, 3} {
				got, gd, err := NearestCentroids(context.Background(), x, c, th)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = got
				} else if !slices.Equal(first, got) {
					t.Fatalf("%+v kernel %s: assignments depend on the thread count", tc, KernelName())
				}
				for i := range want {
					if got[i] != want[i] {
						// Only a float32 near-tie may differ.
						if math.Abs(knn.SquaredL2(x.Row(i), c.Row(int(got[i])))-wd[i]) > 1e-4*(1+wd[i]) {
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
	x := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{0, 0, 1, 1, 5, 5}}
	c := mat32.Matrix{Rows: 8, Cols: 2, Data: []float32{9, 9, 1, 1, 0, 0, 1, 1, 0, 0, 5, 5, 5, 5, 9, 9}}
	forEachLevel(t, func(t *testing.T) {
		got, _, err := NearestCentroids(context.Background(), x, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 2 || got[1] != 1 || got[2] != 5 {
			t.Fatalf("ties: got %v want [2 1 5]", got)
		}
		// 70 duplicate centroids (several AVX-512 four-panel groups and a
		// remainder): the lowest index wins everywhere.
		cc := mat32.Matrix{Rows: 70, Cols: 2, Data: make([]float32, 140)}
		for j := 0; j < 70; j++ {
			cc.Data[2*j], cc.Data[2*j+1] = 3, 3
		}
		cc.Data[2*69], cc.Data[2*69+1] = 1, 1
		cc.Data[2*5], cc.Data[2*5+1] = 1, 1
		got, _, err = NearestCentroids(context.Background(), x, cc, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 5 || got[1] != 5 || got[2] != 0 {
			t.Fatalf("ties over panels: got %v want [5 5 0]", got)
		}
	})
}

func TestNearestCentroidsErrors(t *testing.T) {
	x := mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{0, 0, 1, 1}}
	if _, _, err := NearestCentroids(context.Background(), x, mat32.Matrix{Rows: 1, Cols: 3, Data: make([]float32, 3)}, 1); err == nil {
		t.Fatal("dimension mismatch accepted")
	}
	if _, _, err := NearestCentroids(context.Background(), x, mat32.Matrix{Cols: 2}, 1); err == nil {
		t.Fatal("no centroids accepted")
	}
	if _, _, err := NearestCentroids(context.Background(), mat32.Matrix{Rows: 2, Cols: 2, Data: make([]float32, 3)}, x, 1); err == nil {
		t.Fatal("ragged data accepted")
	}
}

func BenchmarkNearestCentroids(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := randMatrix(rng, 8192, 128)
	c := randMatrix(rng, 2048, 128)
	defer useKernels(kernelsel.Chosen())
	for _, l := range []kernelsel.Level{kernelsel.AVX512, kernelsel.AVX2, kernelsel.Portable} {
		b.Run(l.String(), func(b *testing.B) {
			if !useKernels(l) {
				b.Skipf("this CPU or build lacks the %s kernels", l)
			}
			var got []int32
			var gd []float32
			for b.Loop() {
				var err error
				if got, gd, err = NearestCentroids(context.Background(), x, c, 0); err != nil {
					b.Fatal(err)
				}
			}
			flop := 2 * 8192.0 * 2048 * 128 * float64(b.N)
			b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "Gflop/s")
			checkNearestRows(b, x, c, got, gd, 16)
		})
	}
}

// checkNearestRows compares the first rows' assignments with the float64
// reference (a different centroid only at a float32 near-tie).
func checkNearestRows(b *testing.B, x, c mat32.Matrix, got []int32, gd []float32, rows int) {
	b.Helper()
	sub := mat32.Matrix{Rows: rows, Cols: x.Cols, Data: x.Data[:rows*x.Cols]}
	want, wd := naiveNearest(sub, c)
	for i := range want {
		if math.Abs(knn.SquaredL2(x.Row(i), c.Row(int(got[i])))-wd[i]) > 1e-4*(1+wd[i]) || math.Abs(float64(gd[i])-wd[i]) > 1e-4*(1+wd[i]) {
			b.Fatalf("row %d: centroid %d at %v, float64 reference %d at %v", i, got[i], gd[i], want[i], wd[i])
		}
	}
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
	var got []int32
	var gd []float32
	for i := 0; i < b.N; i++ {
		var err error
		if got, gd, err = NearestCentroids(context.Background(), x, c, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*60502.0*11316*128*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflop/s")
	checkNearestRows(b, x, c, got, gd, 4)
}

// BenchmarkBoundsTile times the pruned pass's micro-kernel alone on one
// L1-resident tile and panel, D = 128, at every kernel level (the value of
// one pair is checked against a float64 dot product).
func BenchmarkBoundsTile(b *testing.B) {
	const d = 128
	rng := rand.New(rand.NewSource(5))
	x := randMatrix(rng, tileRows, d)
	c := randMatrix(rng, tileCols, d)
	r := make([]float32, tileRows*lanes*d+packPad)
	for i := 0; i < tileRows; i++ {
		expandRowGeneric(r[i*lanes:], x.Row(i))
	}
	p := packCentroids(c.Data, tileCols, d)
	ids := make([]int32, tileCols)
	for j := range ids {
		ids[j] = int32(j)
	}
	var want float64
	for t := 0; t < d; t++ {
		want += float64(x.Data[t]) * float64(c.Data[t])
	}
	want = float64(p.norms[0]) - 2*want
	defer useKernels(kernelsel.Chosen())
	for _, l := range []kernelsel.Level{kernelsel.AVX512, kernelsel.AVX2, kernelsel.Portable} {
		b.Run(l.String(), func(b *testing.B) {
			if !useKernels(l) {
				b.Skipf("this CPU or build lacks the %s kernels", l)
			}
			best := make([]float32, tileRows*tileCols)
			bidx := make([]int32, tileRows*tileCols)
			for b.Loop() {
				for i := range best {
					best[i] = float32(math.Inf(1))
				}
				boundsTile(r, p.panels, p.norms, ids, best, bidx, d)
			}
			b.ReportMetric(2*tileRows*tileCols*d/(b.Elapsed().Seconds()/float64(b.N))/1e9, "Gflop/s")
			if math.Abs(float64(best[0])-want) > 1e-3*(1+math.Abs(want)) || bidx[0] != 0 {
				b.Fatalf("best[0] = %v (id %d), want %v (id 0)", best[0], bidx[0], want)
			}
		})
	}
}
