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

// TestKMeansRoundingRows: rows the first assignment placed, by rounding,
// between initial centroids 1 ulp apart are counted and warned about;
// faiss's golden cases (well separated, noisy, subsampled, a jittered
// grid) have none.
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
	if r.RoundingRows <= 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "a few ulp apart") {
		t.Errorf("1-ulp centroids: %d rounding rows, warnings %q", r.RoundingRows, r.Warnings)
	}
	g := readGolden(t, "faiss_kmeans_golden.json")
	for _, c := range g.Cases {
		_, r := goldenKMeans(t, g, c)
		t.Logf("%s: %d rounding rows", c.Name, r.RoundingRows)
		if len(r.Warnings) > 0 && strings.Contains(strings.Join(r.Warnings, "\n"), "rounding") {
			t.Errorf("%s: warnings %q", c.Name, r.Warnings)
		}
		if r.RoundingRows != 0 {
			t.Errorf("%s: %d rounding rows, want 0", c.Name, r.RoundingRows)
		}
	}
}
