package knn

import (
	"strings"
	"testing"
)

// TestBackends iterates the registry: every backend compiled in builds
// and answers to its registered name; every other one is refused with how
// to get it; an unknown name lists them all.
func TestBackends(t *testing.T) {
	entries := Backends.Entries()
	if len(entries) != 3 {
		t.Fatalf("%d backends, want exact, faiss, faiss-gpu", len(entries))
	}
	for _, e := range entries {
		s, err := New(e.Name)
		if !e.Available {
			if err == nil || !strings.Contains(err.Error(), e.HowToGet) || !strings.Contains(err.Error(), "build with -tags faiss") {
				t.Errorf("%s: error %v, want how to get it", e.Name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if s.Name() != e.Name || e.Value.Summary == "" {
			t.Errorf("%s: Name() = %q, summary %q", e.Name, s.Name(), e.Value.Summary)
		}
	}
	_, err := New("nope")
	if err == nil || err.Error() != `unknown k-NN backend "nope"; have: exact, faiss, faiss-gpu` {
		t.Errorf("unknown backend: %v", err)
	}
	if _, ok := Backends.Lookup(ExactName); !ok {
		t.Error("exact is not available")
	}
}
