package clustering

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestKMeansYinyangManyCentroids is the Stanford-Online-Products shape at
// a test's size (sopLike: 600 classes of 2 to 9 noisy rows on the unit
// sphere, D = 32, K = the number of classes) in 10 groups of 64 centroids
// (SOP has 45 of 256). The pruned run must be bit-identical to full passes
// on every kernel level, and from the third pass on (the first two are full
// or nearly: the first update moves every centroid by about the class
// radius) it must skip at least 90 % of the pairs. Centroids that did not move keep
// their panels' bounds only because sortByDrift gathers the moving ones:
// with panels in a fixed order the same groups evaluate 15 % of the pairs.
func TestKMeansYinyangManyCentroids(t *testing.T) {
	x, k := sopLike(600, 32, 0.23)
	forEachLevel(t, func(t *testing.T) {
		opt := DefaultKMeansOptions()
		opt.Threads = 2
		opt.groupSize = 64
		p, _ := kmeansBothWays(t, KernelName(), x, k, opt)
		var late int64
		for _, e := range p.PairEvals[2:] {
			late += e
		}
		brute := int64(x.Rows) * int64(k) * int64(len(p.PairEvals)-2)
		t.Logf("passes 3…%d evaluated %.4f of their pairs; per pass %v", len(p.PairEvals), float64(late)/float64(brute), p.PairEvals)
		if 10*late > brute {
			t.Fatalf("passes 3 on evaluated %d of %d pairs (> 1/10)", late, brute)
		}
	})
}

// TestBoundsTwoPanels checks the two-panel bounds kernels of every level
// against two single-panel calls of the portable kernel: the same values
// and lexicographic minima, ties included (ids permuted across the two
// panels, many equal values), for even and odd D.
func TestBoundsTwoPanels(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(31))
		for _, d := range []int{1, 2, 7, 32, 33} {
			for it := 0; it < 50; it++ {
				x := make([][]float32, tileRows)
				r := make([]float32, tileRows*lanes*d+packPad)
				for i := range x {
					x[i] = make([]float32, d)
					for t := range x[i] {
						x[i][t] = float32(rng.Intn(3) - 1) // small integers: exact ties
					}
					expandRowGeneric(r[i*lanes:], x[i])
				}
				c := make([]float32, 2*tileCols*d)
				for j := range c {
					c[j] = float32(rng.Intn(3) - 1)
				}
				p := packCentroids(c, 2*tileCols, d)
				ids := rng.Perm(1000)[:2*tileCols]
				ids32 := make([]int32, len(ids))
				for j, v := range ids {
					ids32[j] = int32(v)
				}
				start := func() ([]float32, []int32) {
					best := make([]float32, tileRows*tileCols)
					bidx := make([]int32, tileRows*tileCols)
					for i := range best {
						best[i], bidx[i] = float32(math.Inf(1)), math.MaxInt32
						if rng.Intn(4) == 0 {
							best[i], bidx[i] = float32(rng.Intn(5)-2), int32(rng.Intn(1000))
						}
					}
					return best, bidx
				}
				wb, wi := start()
				gb, gi := append([]float32(nil), wb...), append([]int32(nil), wi...)
				rb, ri := append([]float32(nil), wb...), append([]int32(nil), wi...)
				boundsTileGeneric(r, p.panels, p.norms, ids32, wb, wi, d)
				boundsTileGeneric(r, p.panels[d*tileCols:], p.norms[tileCols:], ids32[tileCols:], wb, wi, d)
				boundsTile2(r, p.panels, p.norms, ids32, gb, gi, d)
				boundsRows2(x[0], x[1], x[2], x[3], p.panels, p.norms, ids32, rb, ri, d)
				for i := range wb {
					if math.Float32bits(gb[i]) != math.Float32bits(wb[i]) || gi[i] != wi[i] ||
						math.Float32bits(rb[i]) != math.Float32bits(wb[i]) || ri[i] != wi[i] {
						t.Fatalf("d=%d lane %d: tile (%v, %d), rows (%v, %d), want (%v, %d)", d, i, gb[i], gi[i], rb[i], ri[i], wb[i], wi[i])
					}
				}
			}
		}
	})
}

// sopLike is Stanford-Online-Products-shaped data: classes of 2 to 9 rows
// (uniform), class means uniform on the unit sphere, per-dimension noise
// spread, rows L2-normalised; k is the number of classes.
func sopLike(classes, d int, spread float64) (mat32.Matrix, int) {
	rng := rand.New(rand.NewSource(3))
	var data []float32
	mu := make([]float64, d)
	row := make([]float64, d)
	for c := 0; c < classes; c++ {
		unitMean(rng, mu)
		for p := 2 + rng.Intn(8); p > 0; p-- {
			data = append(data, make([]float32, d)...)
			noisyUnitRow(rng, mu, row, spread, data[len(data)-d:])
		}
	}
	return mat32.Matrix{Rows: len(data) / d, Cols: d, Data: data}, classes
}
