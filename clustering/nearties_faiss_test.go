//go:build faiss

package clustering

import (
	"context"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestNearTiesAgainstFaiss runs faiss 1.7.3's k-means (FaissKMeans: the
// C library, its BLAS) next to KMeans on near-tie data and ordinary data:
// wherever their final assignments differ, some pass had a row within
// rounding (the check misses no divergence), and the 1-ulp copies, where
// faiss differs in most rows, have tied rows.
func TestNearTiesAgainstFaiss(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(11))
	sphere := mat32.Matrix{Rows: 3000, Cols: 64, Data: make([]float32, 3000*64)}
	for i := 0; i < sphere.Rows; i++ {
		for j := 0; j < sphere.Cols; j++ {
			sphere.Data[i*64+j] = float32(float64((i%60)*(j%7))*0.05 + rng.NormFloat64())
		}
	}
	cases := []struct {
		name string
		x    mat32.Matrix
		k    int
	}{{"sphere3000x64", sphere, 60}}
	for _, c := range nearTieCases() {
		cases = append(cases, struct {
			name string
			x    mat32.Matrix
			k    int
		}{c.name, c.x, c.k})
	}
	for _, c := range cases {
		opt, err := KMeansPreset("roth")
		if err != nil {
			t.Fatal(err)
		}
		r, err := KMeans(ctx, c.x, c.k, opt)
		if err != nil {
			t.Fatal(err)
		}
		f, err := FaissKMeans(ctx, c.x, c.k, opt)
		if err != nil {
			t.Fatal(err)
		}
		diff := 0
		for i := range r.Assign {
			if r.Assign[i] != f.Assign[i] {
				diff++
			}
		}
		t.Logf("%s: %d of %d final assignments differ from faiss's; %d rows within rounding, %d tied", c.name, diff, c.x.Rows, r.RoundingRows, r.TiedRows)
		if diff > 0 && r.RoundingRows == 0 {
			t.Errorf("%s: faiss differs in %d rows but no pass had a row within rounding", c.name, diff)
		}
		if c.name == "ulp20x40" && (diff == 0 || r.TiedRows == 0) {
			t.Errorf("%s: %d rows differ, %d tied; want both > 0", c.name, diff, r.TiedRows)
		}
	}
}
