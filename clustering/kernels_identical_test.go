package clustering

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// nearTieData are inputs rich in equal and nearly equal distances to
// centroids: duplicate rows, a small integer grid, tight classes on the
// unit sphere (σ = 0.005) and unit rows shaped like a trained model's
// output.
func nearTieData() map[string]mat32.Matrix {
	rng := rand.New(rand.NewSource(29))
	out := map[string]mat32.Matrix{}
	gen := func(name string, n, d int, f func(i int, row []float32)) {
		m := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
		for i := 0; i < n; i++ {
			f(i, m.Row(i))
		}
		out[name] = m
	}
	unit := func(row []float32) {
		var s float64
		for _, v := range row {
			s += float64(v) * float64(v)
		}
		for t := range row {
			row[t] = float32(float64(row[t]) / math.Sqrt(s))
		}
	}
	base := randMatrix(rng, 40, 33)
	gen("duplicates", 900, 33, func(i int, row []float32) { copy(row, base.Row(i%40)) })
	gen("grid", 700, 16, func(i int, row []float32) {
		for t := range row {
			row[t] = float32(rng.Intn(5) - 2)
		}
	})
	centres := randMatrix(rng, 37, 64)
	for i := 0; i < 37; i++ {
		unit(centres.Row(i))
	}
	gen("tight", 1100, 64, func(i int, row []float32) {
		for t := range row {
			row[t] = centres.Data[(i%37)*64+t] + float32(0.005*rng.NormFloat64())
		}
		unit(row)
	})
	dirs := randMatrix(rng, 8, 128)
	gen("embedding", 1200, 128, func(i int, row []float32) {
		c := i % 23
		for t := range row {
			v := 0.3 * rng.NormFloat64()
			for q := 0; q < 3; q++ {
				v += float64(dirs.Data[((c+q)%8)*128+t]) * float64(1+c%5)
			}
			row[t] = float32(v)
		}
		unit(row)
	})
	return out
}

// TestKernelsIdentical runs every kernel level this CPU offers on the
// near-tie inputs and requires the same bits: nearest centroids and their
// distances, and k-means (pruned and full passes, strict and pml presets)
// assignments, centroids and objective histories. Every level computes a
// pair as one FMA chain in ascending dimension, so the equality holds by
// construction and any difference is a bug.
func TestKernelsIdentical(t *testing.T) {
	defer useKernels(kernelsel.Chosen())
	type result struct {
		assign [][]int32
		bits   [][]uint64 // distances, centroids and histories as bits
	}
	ctx := context.Background()
	for name, x := range nearTieData() {
		var ref *result
		var refLevel kernelsel.Level
		for _, l := range []kernelsel.Level{kernelsel.AVX512, kernelsel.AVX2, kernelsel.Portable} {
			if !useKernels(l) {
				continue
			}
			res := &result{}
			cent := mat32.Matrix{Rows: 50, Cols: x.Cols, Data: x.Data[:50*x.Cols]}
			a, d, err := NearestCentroids(ctx, x, cent, 2)
			if err != nil {
				t.Fatal(err)
			}
			res.assign = append(res.assign, a)
			res.bits = append(res.bits, bits32(d))
			for _, preset := range []string{"strict", "pml"} {
				for _, full := range []bool{false, true} {
					opt := kmeansPresets[preset]
					opt.Threads, opt.fullPasses, opt.groupSize = 2, full, 4
					r, err := KMeans(ctx, x, 31, opt)
					if err != nil {
						t.Fatal(err)
					}
					res.assign = append(res.assign, r.Assign)
					res.bits = append(res.bits, bits32(r.Centroids.Data), bits64(r.History))
				}
			}
			if ref == nil {
				ref, refLevel = res, l
				continue
			}
			for i := range res.assign {
				if !slices.Equal(res.assign[i], ref.assign[i]) {
					t.Errorf("%s: assignments %d differ between %s and %s", name, i, l, refLevel)
				}
			}
			for i := range res.bits {
				if !slices.Equal(res.bits[i], ref.bits[i]) {
					t.Errorf("%s: values %d (distances, centroids, histories) differ between %s and %s", name, i, l, refLevel)
				}
			}
		}
	}
}

func bits32(v []float32) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = uint64(math.Float32bits(x))
	}
	return out
}

func bits64(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}
