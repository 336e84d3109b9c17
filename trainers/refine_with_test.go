package trainers

import (
	"context"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// A mode that builds no batch, or a negative size, is refused before the
// run directory is read.
func TestRefineWithRefusals(t *testing.T) {
	emb := mat32.Matrix{Rows: 1, Cols: 1, Data: []float32{1}}
	for _, tt := range []testtime.Options{{Mode: "none"}, {Mode: "recip"}, {Mode: "knn", K: -1}} {
		if _, err := RefineWith(context.Background(), t.TempDir(), emb, tt); !usage.Is(err) {
			t.Errorf("%+v: %v", tt, err)
		}
	}
	if _, err := RefineWith(context.Background(), t.TempDir(), emb, testtime.Options{Mode: "knn"}); err == nil || usage.Is(err) {
		t.Errorf("a directory with no run: %v", err)
	}
}
