package knn

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestBackends iterates the registry: every backend compiled in builds,
// answers to its registered name, has a summary, matches BruteForce (within
// float32 rounding, ties in any order) on small problems of every metric
// and exclusion with k below and above the database size, and refuses bad
// input with ErrBadInput; every other backend is refused with how to get
// it; an unknown name lists them all. A new backend is checked here without
// a line of this file changing (docs/extending.md).
func TestBackends(t *testing.T) {
	entries := Backends.Entries()
	for _, want := range []string{ExactName, FaissName, FaissGPUName} {
		if _, err := Backends.Get(want); err != nil && !strings.Contains(err.Error(), "not in this binary") {
			t.Errorf("%s is not declared: %v", want, err)
		}
	}
	for _, e := range entries {
		s, err := New(e.Name)
		if !e.Available {
			if err == nil || !strings.Contains(err.Error(), e.HowToGet) || e.HowToGet == "" || e.Summary == "" {
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
		checkBackend(t, e.Name, s)
	}
	_, err := New("nope")
	if want := `unknown k-NN backend "nope"; have: ` + strings.Join(Backends.Names(), ", "); err == nil || err.Error() != want {
		t.Errorf("unknown backend: %v, want %s", err, want)
	}
	if _, ok := Backends.Lookup(ExactName); !ok {
		t.Error("exact is not available")
	}
}

// checkBackend compares s with BruteForce on Gaussian data and checks that it
// refuses a dimension mismatch.
func checkBackend(t *testing.T, name string, s Searcher) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(9))
	db := randMatrix(rng, 23, 5, "gauss")
	other := randMatrix(rng, 7, 5, "gauss")
	for _, metric := range []Metric{L2, IP} {
		for _, excl := range []Exclusion{ExcludeNone, ExcludeSelf} {
			q := other
			if excl == ExcludeSelf {
				q = db
			}
			for _, k := range []int{1, 4, 22, 30} {
				opt := Options{Metric: metric, Exclude: excl}
				label := fmt.Sprintf("%s %v excl=%v k=%d", name, metric, excl, k)
				want, err := BruteForce{}.Search(ctx, q, db, k, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Search(ctx, q, db, k, opt)
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				checkParity(t, label, q, db, got, want, metric, excl, false)
			}
		}
	}
	bad := mat32.Matrix{Rows: 2, Cols: 4, Data: make([]float32, 8)}
	if _, err := s.Search(ctx, bad, db, 3, Options{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("%s: dimension mismatch: %v, want ErrBadInput", name, err)
	}
}
