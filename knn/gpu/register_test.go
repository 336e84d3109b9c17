package gpu

import (
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/registry"
	"github.com/dmlbench/dmlbench/knn"
)

// TestRegistered: Register adds gpu and auto with summaries; gpu
// fails with the one-line reason when there is no device, auto falls back
// to the exact backend (and picks gpu when there is one).
func TestRegistered(t *testing.T) {
	table := registry.New[knn.Backend]("k-NN backend")
	Register(table)
	for _, name := range []string{Name, AutoName} {
		b, err := table.Get(name)
		if err != nil || b.Summary == "" {
			t.Fatalf("%s: %v (summary %q)", name, err, b.Summary)
		}
	}
	ok, info := Available()
	g, gerr := New()
	a, aerr := NewAuto()
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
