package knn

import (
	"context"
	"math"
	"math/rand"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// spotCheck compares query i's returned list with a float64 scan of db
// (distances within a relative tolerance; the first id when isolated).
func spotCheck(b *testing.B, x mat32.Matrix, nb *Neighbors, i int, opt Options) {
	b.Helper()
	if nb.N != x.Rows || len(nb.IDs) != nb.N*nb.K {
		b.Fatalf("output %d×%d for %d queries", nb.N, nb.K, x.Rows)
	}
	ds := make([]float64, 0, x.Rows)
	for j := 0; j < x.Rows; j++ {
		if opt.Exclude == ExcludeSelf && j == i {
			continue
		}
		d := exactDist(x.Row(i), x.Row(j), opt.Metric)
		if opt.Metric == IP {
			d = -d
		}
		ds = append(ds, d)
	}
	// k-th smallest by partial sort of the first K.
	k := min(nb.K, len(ds))
	for s := 0; s < k; s++ {
		m := s
		for t := s + 1; t < len(ds); t++ {
			if ds[t] < ds[m] {
				m = t
			}
		}
		ds[s], ds[m] = ds[m], ds[s]
		got := float64(nb.DistOf(i)[s])
		if opt.Metric == IP {
			got = -got
		}
		if math.Abs(got-ds[s]) > 1e-4*(1+math.Abs(ds[s])) {
			b.Fatalf("query %d slot %d: distance %g, float64 scan %g", i, s, got, ds[s])
		}
		if s > 0 && s+50 < k { // keep the O(k·N) check short for k = 1000
			s += 50
			for u := s - 49; u <= s; u++ { // finish the partial sort up to s
				m := u
				for t := u + 1; t < len(ds); t++ {
					if ds[t] < ds[m] {
						m = t
					}
				}
				ds[u], ds[m] = ds[m], ds[u]
			}
		}
	}
}

func gaussUnit(n, d int, seed int64) mat32.Matrix {
	rng := rand.New(rand.NewSource(seed))
	x := randMatrix(rng, n, d, "gauss")
	for i := 0; i < n; i++ {
		r := x.Row(i)
		var s float64
		for _, v := range r {
			s += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(s))
		for t := range r {
			r[t] *= inv
		}
	}
	return x
}

func benchSearch(b *testing.B, x mat32.Matrix, k int, e Exact, opt Options) {
	var nb *Neighbors
	var err error
	for b.Loop() {
		nb, err = e.Search(context.Background(), x, x, k, opt)
		if err != nil {
			b.Fatal(err)
		}
	}
	flops := 2 * float64(x.Rows) * float64(x.Rows) * float64(x.Cols)
	b.ReportMetric(flops/1e9/(b.Elapsed().Seconds()/float64(b.N)), "eff-Gflop/s")
	spotCheck(b, x, nb, 0, opt)
	spotCheck(b, x, nb, x.Rows-1, opt)
}

// BenchmarkExact_SOP is the Stanford Online Products test-set size
// (60 502 × 128), all-vs-all with self-exclusion: k = 9 (symmetric path),
// k = 9 forced onto the general path, and k = 1000 (general path, top-k
// dominated). "eff-Gflop/s" counts the full N² dot products even where the
// symmetric path computes half.
func BenchmarkExact_SOP(b *testing.B) {
	if testing.Short() {
		b.Skip("SOP-size benchmark skipped in -short mode")
	}
	x := gaussUnit(60502, 128, 1)
	for _, c := range []struct {
		k    int
		e    Exact
		name string
	}{{9, Exact{}, "k=9"}, {1000, Exact{}, "k=1000"}, {9, Exact{NoSymmetry: true}, "k=9/general"}} {
		b.Run(c.name, func(b *testing.B) {
			benchSearch(b, x, c.k, c.e, Options{Metric: IP, Exclude: ExcludeSelf})
		})
	}
}

// BenchmarkExact_20k is 20 000 × 128, k = 9, L2, leave-one-out.
func BenchmarkExact_20k(b *testing.B) {
	x := gaussUnit(20000, 128, 2)
	benchSearch(b, x, 9, Exact{}, Options{Metric: L2, Exclude: ExcludeSelf})
}

// BenchmarkKernel measures the products A·Bᵀ for 4096 × 4096 × 128 float32
// on all cores: every micro-kernel over packed panels (results left in the
// epilogue block, as Exact consumes them; D[0][0] is checked) and gonum's
// blas32 Sgemm (writing C) for comparison.
func BenchmarkKernel(b *testing.B) {
	const m, n, kc = 4096, 4096, 128
	rng := rand.New(rand.NewSource(3))
	A := randMatrix(rng, m, kc, "gauss")
	B := randMatrix(rng, n, kc, "gauss")
	var want float64
	for p := 0; p < kc; p++ {
		want += float64(A.Data[p]) * float64(B.Data[p])
	}
	flops := 2.0 * m * n * kc
	threads := runtime.GOMAXPROCS(0)
	for ki := range kernels {
		kern := kernels[ki]
		nr := kern.nr
		b.Run(kern.name, func(b *testing.B) {
			apack := alignedFloats(m * kc)
			bpack := alignedFloats(n * kc)
			for i := 0; i < m/mr+1; i++ {
				if i*mr < m {
					packPanel(apack[i*mr*kc:], A, i*mr, min(mr, m-i*mr))
				}
			}
			for j := 0; j < n/nr; j++ {
				packPanel(bpack[j*nr*kc:], B, j*nr, nr)
			}
			var c00 float32 // D[0][0] as the task of rows 0.. computed it
			noCol := make([]float32, nrMax)
			zero := make([]float32, nrMax)
			for i := range noCol {
				noCol[i] = negInf
			}
			const rowsPerTask = 240
			for b.Loop() {
				parallel.For(threads, (m+rowsPerTask-1)/rowsPerTask, func(t int) {
					ep := &kernEpi{scale: fill8(1), lo: fill8(negInf), thr: fill8(negInf), cthr: &noCol[0], nx: &zero[0]}
					r0, r1 := t*rowsPerTask, min(m, (t+1)*rowsPerTask)
					for jp := 0; jp < n/nr; jp++ {
						for i0 := r0; i0+mr <= r1; i0 += mr {
							kern.fn(&apack[i0*kc], &bpack[jp*nr*kc], kc, ep)
							if i0 == 0 && jp == 0 {
								c00 = ep.c[0]
							}
						}
					}
				})
			}
			b.ReportMetric(flops/1e9/(b.Elapsed().Seconds()/float64(b.N)), "Gflop/s")
			if math.Abs(float64(c00)-want) > 1e-3*(1+math.Abs(want)) {
				b.Fatalf("C[0][0] = %g, want %g", c00, want)
			}
		})
	}
	b.Run("gonum-blas32-Sgemm", func(b *testing.B) {
		C := blas32.General{Rows: m, Cols: n, Stride: n, Data: make([]float32, m*n)}
		a := blas32.General{Rows: m, Cols: kc, Stride: kc, Data: A.Data}
		bb := blas32.General{Rows: n, Cols: kc, Stride: kc, Data: B.Data}
		for b.Loop() {
			blas32.Gemm(blas.NoTrans, blas.Trans, 1, a, bb, 0, C)
		}
		b.ReportMetric(flops/1e9/(b.Elapsed().Seconds()/float64(b.N)), "Gflop/s")
		if math.Abs(float64(C.Data[0])-want) > 1e-3*(1+math.Abs(want)) {
			b.Fatalf("C[0][0] = %g, want %g", C.Data[0], want)
		}
	})

}
