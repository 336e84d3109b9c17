package knn

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// nearTieInputs are embeddings rich in equal and nearly equal distances,
// where a kernel that rounded differently would reorder neighbours:
// duplicate rows, a small integer grid, tight classes on the unit sphere
// (σ = 0.005) and unit rows shaped like a trained model's output (a few
// dominant directions per class plus noise).
func nearTieInputs() map[string]mat32.Matrix {
	rng := rand.New(rand.NewSource(29))
	out := map[string]mat32.Matrix{}
	gen := func(name string, n, d int, f func(i, t int, row []float32)) {
		m := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
		for i := 0; i < n; i++ {
			for t := 0; t < d; t++ {
				f(i, t, m.Data[i*d:(i+1)*d])
			}
		}
		out[name] = m
	}
	base := make([]float32, 40*33)
	for i := range base {
		base[i] = float32(rng.NormFloat64())
	}
	gen("duplicates", 517, 33, func(i, t int, row []float32) { row[t] = base[(i%40)*33+t] })
	gen("grid", 403, 16, func(i, t int, row []float32) { row[t] = float32(rng.Intn(5) - 2) })
	centres := sphereRows(rng, 37, 64)
	gen("tight", 611, 64, func(i, t int, row []float32) {
		row[t] = centres.Data[(i%37)*64+t] + float32(0.005*rng.NormFloat64())
		if t == 63 {
			normalise(row)
		}
	})
	dirs := sphereRows(rng, 8, 128)
	gen("embedding", 700, 128, func(i, t int, row []float32) {
		c := i % 23
		v := 0.3 * rng.NormFloat64()
		for q := 0; q < 3; q++ {
			v += float64(dirs.Data[((c+q)%8)*128+t]) * float64(1+c%5)
		}
		row[t] = float32(v)
		if t == 127 {
			normalise(row)
		}
	})
	return out
}

// sphereRows returns n Gaussian rows of dimension d scaled to unit norm.
func sphereRows(rng *rand.Rand, n, d int) mat32.Matrix {
	m := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < n; i++ {
		normalise(m.Row(i))
	}
	return m
}

func normalise(row []float32) {
	var s float64
	for _, v := range row {
		s += float64(v) * float64(v)
	}
	for t := range row {
		row[t] = float32(float64(row[t]) / math.Sqrt(s))
	}
}

// TestKernelsIdentical runs every kernel this CPU offers on the near-tie
// inputs and requires the same bits everywhere: neighbour lists and
// distances (symmetric and general paths, L2 and IP, with a watch), and
// the mean pairwise distance. The equality is by construction (one FMA
// chain per pair in ascending dimension, the epilogue's product by −2 or
// −1 exact), so any difference is a bug, not noise.
func TestKernelsIdentical(t *testing.T) {
	if len(kernels) < 2 {
		t.Logf("only %s on this CPU: nothing to compare", kernels[0].name)
	}
	ctx := context.Background()
	for name, x := range nearTieInputs() {
		var watch [][]int32
		for i := 0; i < x.Rows; i++ {
			watch = append(watch, []int32{int32((i + 7) % x.Rows), int32((i + 40) % x.Rows)})
		}
		type result struct {
			ids     [][]int32
			dist    [][]float32
			ranks   [][]int32
			meanL2  float64
			kernels string
		}
		var ref *result
		for ki := range kernels {
			k := &kernels[ki]
			res := &result{kernels: k.name}
			for _, run := range []struct {
				e   Exact
				opt Options
			}{
				{Exact{kernel: k}, Options{Exclude: ExcludeSelf, Watch: &Watch{IDs: watch, MaxRank: 300}}},
				{Exact{kernel: k, NoSymmetry: true}, Options{Exclude: ExcludeSelf}},
				{Exact{kernel: k}, Options{Metric: IP}},
			} {
				nb, err := run.e.Search(ctx, x, x, 25, run.opt)
				if err != nil {
					t.Fatal(err)
				}
				res.ids = append(res.ids, nb.IDs)
				res.dist = append(res.dist, nb.Dist)
				if nb.Ranks != nil {
					res.ranks = append(res.ranks, slices.Concat(nb.Ranks...))
				}
			}
			m, err := meanPairwiseL2(ctx, x, 2, *k)
			if err != nil {
				t.Fatal(err)
			}
			res.meanL2 = m
			if ref == nil {
				ref = res
				continue
			}
			for r := range res.ids {
				if !slices.Equal(res.ids[r], ref.ids[r]) {
					t.Errorf("%s run %d: neighbours of %s differ from %s", name, r, res.kernels, ref.kernels)
				}
				for i := range res.dist[r] {
					if math.Float32bits(res.dist[r][i]) != math.Float32bits(ref.dist[r][i]) {
						t.Errorf("%s run %d: distance %d of %s is %v, %s %v", name, r, i, res.kernels, res.dist[r][i], ref.kernels, ref.dist[r][i])
						break
					}
				}
			}
			for r := range res.ranks {
				if !slices.Equal(res.ranks[r], ref.ranks[r]) {
					t.Errorf("%s: watched ranks of %s differ from %s", name, res.kernels, ref.kernels)
				}
			}
			if math.Float64bits(res.meanL2) != math.Float64bits(ref.meanL2) {
				t.Errorf("%s: MeanPairwiseL2 %v with %s, %v with %s", name, res.meanL2, res.kernels, ref.meanL2, ref.kernels)
			}
		}
	}
}
