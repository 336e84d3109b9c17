package metrics

import (
	"errors"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/knn"
)

// The backend table holds knn's backends and the device's, built here:
// every name opens or says why not, and a misspelt one is suggest's error.
func TestBackendTable(t *testing.T) {
	names := Backends.Names()
	for _, want := range []string{"auto", knn.ExactName, knn.FaissName, knn.FaissGPUName, "gpu"} {
		if !slices.Contains(names, want) {
			t.Fatalf("backends %v lack %s", names, want)
		}
	}
	b, err := OpenBackend("auto", Strict, 1)
	if err != nil || b.Searcher == nil || b.KMeans == nil {
		t.Fatalf("auto: %+v, %v", b, err)
	}
	if _, err := OpenBackend("exct", Strict, 1); !errors.Is(err, suggest.ErrUnknown) {
		t.Fatalf("exct: %v, want an unknown-name error", err)
	}
}
