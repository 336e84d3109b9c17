package gpu

import (
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/knn"
)

// TestRegistered: gpu and auto are in knn.Backends with summaries; gpu
// fails with the one-line reason when there is no device, auto falls back
// to the exact backend (and picks gpu when there is one).
func TestRegistered(t *testing.T) {
	for _, name := range []string{Name, AutoName} {
		b, err := knn.Backends.Get(name)
		if err != nil || b.Summary == "" {
			t.Fatalf("%s: %v (summary %q)", name, err, b.Summary)
		}
	}
	ok, info := Available()
	g, gerr := knn.New(Name)
	a, aerr := knn.New(AutoName)
	if aerr != nil {
		t.Fatalf("auto: %v", aerr)
	}
	if ok {
		if gerr != nil || g.Name() != Name || a.Name() != Name {
			t.Fatalf("device %s: gpu %v (%v), auto picks %v", info, g, gerr, a)
		}
		return
	}
	if gerr == nil || !strings.Contains(gerr.Error(), "no CUDA device: ") || strings.Contains(gerr.Error(), "\n") {
		t.Fatalf("gpu without a device: %v", gerr)
	}
	if a.Name() != knn.ExactName {
		t.Fatalf("auto without a device picks %s, want exact", a.Name())
	}
}
