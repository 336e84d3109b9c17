package plots

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/projection"
)

// The n hues are a permutation: no two classes share a colour.
func TestHueColorsDistinct(t *testing.T) {
	for _, n := range []int{1, 2, 7, 10, 11, 20} {
		seen := map[any]bool{}
		for k := 0; k < n; k++ {
			c := hueColor(k, n)
			if seen[c] {
				t.Fatalf("n = %d: colour %v repeats at %d", n, c, k)
			}
			seen[c] = true
		}
	}
}

// A subsampled map says so in its title.
func TestTSNETitle(t *testing.T) {
	if got := TSNETitle(50, 90, 4, 6, 10); !strings.Contains(got, "random subsample: 50 of 90 points, 4 of 6 classes") {
		t.Fatalf("title %q", got)
	}
	if got := TSNETitle(90, 90, 6, 6, 10); strings.Contains(got, "subsample") {
		t.Fatalf("title %q", got)
	}
}

// TSNEMap maps only the sampled rows, one scatter per drawn class with the
// label names in the legend, and a seed gives the same map.
func TestTSNEMap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n, d = 60, 5
	x := knn.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i % 5)
		for k := 0; k < d; k++ {
			x.Data[i*d+k] = float32(rng.NormFloat64()) + float32(8*int(ids[i])*(k%2))
		}
	}
	names := []string{"cls-a", "cls-b", "cls-c", "cls-d", "cls-e"}
	s := projection.SampleRows(ids, 3, 20, 7)
	if len(s.Classes) != 3 || len(s.Rows) != 20 || s.AllClasses != 5 {
		t.Fatalf("sample: %d classes, %d rows, %d in all", len(s.Classes), len(s.Rows), s.AllClasses)
	}
	opt := projection.Options{Perplexity: 5, Iters: 260, Seed: 7, Threads: 1}
	p, res, err := TSNEMap(context.Background(), x, ids, names, s, opt, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Y) != 2*len(s.Rows) || !strings.Contains(p.Title.Text, "20 of 60 points, 3 of 5 classes") {
		t.Fatalf("map of %d coordinates, title %q", len(res.Y), p.Title.Text)
	}
	svg := filepath.Join(t.TempDir(), "m.svg")
	if err := SavePlots(svg, []*plot.Plot{p}, 0, 0); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for k, name := range names {
		drawn := false
		for _, c := range s.Classes {
			drawn = drawn || int(c) == k
		}
		if strings.Contains(string(b), ">"+name+"<") != drawn {
			t.Errorf("legend entry %q: shown %v, class drawn %v", name, !drawn, drawn)
		}
	}
	_, res2, err := TSNEMap(context.Background(), x, ids, names, projection.SampleRows(ids, 3, 20, 7), opt, "given")
	if err != nil || !reflect.DeepEqual(res.Y, res2.Y) {
		t.Fatalf("same seed, different map (%v)", err)
	}
}
