package metrics

import (
	"context"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Every convention warns about queries without positives (Roth too, in
// query/gallery mode where they are dropped from the MAP metrics).
func TestLoneQueryWarningEveryConvention(t *testing.T) {
	q := mat32.Matrix{Rows: 3, Cols: 1, Data: []float32{0, 1, 2}}
	g := mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{0, 1}}
	in := Input{Emb: q, Labels: []int32{0, 1, 2}, Gallery: &g, GalleryLabels: []int32{0, 1}}
	for _, conv := range []Convention{Strict, Roth, PML} {
		res, err := Evaluate(context.Background(), in, Options{Ks: []int{1}, Convention: conv, Metrics: []string{"R@1", "MAP@R"}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range res.Warnings {
			found = found || strings.HasPrefix(w, "1 ")
		}
		if !found || res.LoneQueries != 1 {
			t.Errorf("%s: warnings %q, lone %d; want a warning about the 1 query without a gallery item", conv, res.Warnings, res.LoneQueries)
		}
	}
}
