package plots

import (
	"path/filepath"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestTSNEInputs(t *testing.T) {
	for _, in := range []TSNEInputs{
		{Labels: "l", Iters: 1, Perplexity: 5},
		{Emb: "e", Labels: "l", Classes: -1, Iters: 1, Perplexity: 5},
		{Emb: "e", Labels: "l", Iters: 0, Perplexity: 5},
		{Emb: "e", Labels: "l", Iters: 1, Perplexity: 0},
	} {
		if err := in.Check(); !usage.Is(err) {
			t.Errorf("%+v: %v", in, err)
		}
	}
	dir := t.TempDir()
	e, l := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	if err := arrays.SaveNPY(e, mat32.Matrix{Rows: 4, Cols: 1, Data: []float32{0, 1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(l, []int32{0, 0, 1, 1}); err != nil {
		t.Fatal(err)
	}
	in := TSNEInputs{Emb: e, Labels: l, Iters: 1, Perplexity: 2}
	if _, _, _, smp, err := in.Load(); err != nil || len(smp.Rows) != 4 {
		t.Fatalf("%v %v", smp, err)
	}
	in.Perplexity = 3
	if _, _, _, _, err := in.Load(); !usage.Is(err) {
		t.Fatalf("perplexity 3 of 4 points: %v", err)
	}
}
