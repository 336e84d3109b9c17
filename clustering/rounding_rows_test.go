package clustering

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// ulpClusters is bases points of dimension d with copies rows each, every
// copy 1 ulp from its base in one coordinate: initial centroids drawn
// from the rows are often 1 ulp apart, and the rows between them are
// assigned by float32 rounding.
func ulpClusters(bases, copies, d int) mat32.Matrix {
	rng := rand.New(rand.NewSource(4))
	x := mat32.Matrix{Rows: bases * copies, Cols: d, Data: make([]float32, bases*copies*d)}
	for b := 0; b < bases; b++ {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(4 * rng.NormFloat64())
		}
		for c := 0; c < copies; c++ {
			row := x.Row(b*copies + c)
			copy(row, v)
			k := rng.Intn(d)
			row[k] = math.Nextafter32(row[k], float32(math.Inf(2*(c%2)-1)))
		}
	}
	return x
}

// TestKMeansRoundingRows: the 1-ulp clusters and the duplicate-heavy
// faiss cases (where faiss 1.7.3 sends rows to both of two bitwise-equal
// centroids, and in case s0 parts from KMeans at the first iteration) have
// tied rows; faiss's other golden cases (well separated, noisy,
// subsampled, a jittered grid), where faiss's assignment is KMeans's, have
// none, and at most a few rows within the rigorous bound.
func TestKMeansRoundingRows(t *testing.T) {
	t.Parallel()
	x := ulpClusters(20, 40, 8)
	opt, err := KMeansPreset("roth")
	if err != nil {
		t.Fatal(err)
	}
	r, err := KMeans(context.Background(), x, 20, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.RoundingRows != 560 || r.TiedRows != 560 || len(r.RoundingPasses) != 21 || r.RoundingPasses[0] != 480 || r.TiedPairs == nil {
		t.Errorf("1-ulp centroids: %d rows within rounding, %d tied, passes %v", r.RoundingRows, r.TiedRows, r.RoundingPasses)
	}
	for _, f := range []string{"faiss_kmeans_golden.json", "faiss_duplicates.json"} {
		g := readGolden(t, f)
		for _, c := range g.Cases {
			_, r := goldenKMeans(t, g, c)
			t.Logf("%s: %d rows within rounding, %d tied, passes %v", c.Name, r.RoundingRows, r.TiedRows, r.RoundingPasses)
			dup := strings.HasPrefix(c.Name, "dup")
			if dup && (r.TiedRows == 0 || r.RoundingPasses[0] != r.TiedRows) || !dup && (r.TiedRows != 0 || r.RoundingRows > 4 || r.TiedPairs != nil) {
				t.Errorf("%s: %d rows within rounding, %d tied, passes %v", c.Name, r.RoundingRows, r.TiedRows, r.RoundingPasses)
			}
		}
	}
}
