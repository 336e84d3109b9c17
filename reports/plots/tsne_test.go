package plots

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/reports/projection"
)

// Every class of a map up to 70 differs from every other in its colour
// and marker pair (at 20 classes too, where hues alone blur).
func TestClassStylesDistinct(t *testing.T) {
	seen := map[string]int{}
	for k := 0; k < 70; k++ {
		c, g := classStyle(k)
		key := fmt.Sprintf("%v %T %v", c, g, g)
		if j, ok := seen[key]; ok {
			t.Fatalf("classes %d and %d share colour and marker %s", j, k, key)
		}
		seen[key] = k
	}
}

// The caption, not the title, says what the map shows, to 3 digits.
func TestTSNECaption(t *testing.T) {
	if got := TSNECaption(50, 90, 4, 6, 10, 1.23456); got != "random subsample: 50 of 90 points, 4 of 6 classes; perplexity 10, KL 1.23" {
		t.Fatalf("caption %q", got)
	}
	if got := TSNECaption(90, 90, 6, 6, 10, 0.5); strings.Contains(got, "subsample") {
		t.Fatalf("caption %q", got)
	}
}

// TSNEMap maps only the sampled rows, one scatter per drawn class with the
// label names in the legend, and a seed gives the same map.
func TestTSNEMap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n, d = 60, 5
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
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
	f, res, err := TSNEMap(context.Background(), x, ids, names, s, opt, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Plot
	if len(res.Y) != 2*len(s.Rows) || p.Title.Text != "t-SNE" || p.X.Label.Text != "t-SNE 1" {
		t.Fatalf("map of %d coordinates, title %q, x label %q", len(res.Y), p.Title.Text, p.X.Label.Text)
	}
	if c := TSNECaption(len(s.Rows), n, len(s.Classes), s.AllClasses, 5, res.KL); !strings.Contains(c, "20 of 60 points, 3 of 5 classes") {
		t.Fatalf("caption %q", c)
	}
	svg := filepath.Join(t.TempDir(), "m.svg")
	if err := SavePlots(svg, []*Figure{f}, 0, 0, 0); err != nil {
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
	_, res2, err := TSNEMap(context.Background(), x, ids, names, projection.SampleRows(ids, 3, 20, 7), opt, PlotOptions{Title: "given"})
	if err != nil || !reflect.DeepEqual(res.Y, res2.Y) {
		t.Fatalf("same seed, different map (%v)", err)
	}
}
