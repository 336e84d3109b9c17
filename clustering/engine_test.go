package clustering

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// countingAssigner is a CentroidAssigner that runs the CPU kernel and
// counts its calls.
type countingAssigner struct{ calls *atomic.Int32 }

func (countingAssigner) Name() string { return "counting" }

func (a countingAssigner) NearestCentroids(ctx context.Context, x, c mat32.Matrix) ([]int32, []float32, error) {
	a.calls.Add(1)
	return NearestCentroids(ctx, x, c, 1)
}

var testAssignerCalls atomic.Int32

func init() {
	Engines.Register("test-counting", func(opt KMeansOptions) (*KMeansEngine, error) {
		return AssignerEngine(countingAssigner{&testAssignerCalls}, opt), nil
	})
	Engines.Register("test-unavailable", func(KMeansOptions) (*KMeansEngine, error) {
		return nil, errors.New("no such device")
	})
	Engines.Register("test-fallback", func(KMeansOptions) (*KMeansEngine, error) { return nil, nil })
}

// TestKMeansFor: the CPU backends and a fallback assigner give KMeans with
// the convention's preset; a registered assigner runs every assignment
// pass (NIter + 1) with the same results (it computes the same kernel);
// an assigner that cannot open, an unknown convention and a seed beyond
// 32 bits are errors.
func TestKMeansFor(t *testing.T) {
	t.Parallel()
	x := clusteredMatrix(rand.New(rand.NewSource(3)), 600, 12, 20, 3)
	for _, conv := range []string{"strict", "roth", "pml"} {
		opt, _ := KMeansPreset(conv)
		opt.Seed = 77
		want, err := KMeans(context.Background(), x, 25, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, backend := range []string{"", knn.ExactName, "bruteforce", "test-fallback", "test-counting"} {
			e, err := KMeansFor(backend, conv, 1)
			if err != nil {
				t.Fatal(err)
			}
			before := testAssignerCalls.Load()
			got, err := e.Run(context.Background(), x, 25, 77)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Assign, want.Assign) || !reflect.DeepEqual(got.Centroids.Data, want.Centroids.Data) ||
				!reflect.DeepEqual(got.History, want.History) || got.Objective != want.Objective {
				t.Fatalf("%s %q (%s): result differs from KMeans", conv, backend, e)
			}
			calls := int(testAssignerCalls.Load() - before)
			if backend == "test-counting" {
				if calls != opt.NIter+1 || !strings.Contains(e.String(), "counting") {
					t.Fatalf("%s: %d assigner calls (want %d), %s", conv, calls, opt.NIter+1, e)
				}
			} else if e.Options().Assigner != nil || !strings.Contains(e.String(), "CPU") {
				t.Fatalf("%s %q: %s", conv, backend, e)
			}
		}
	}
	if _, err := KMeansFor("test-unavailable", "strict", 0); err == nil || !strings.Contains(err.Error(), "no such device") {
		t.Fatalf("unavailable assigner: %v", err)
	}
	if _, err := KMeansFor(knn.ExactName, "sklearn", 0); !errors.Is(err, ErrBadInput) {
		t.Fatalf("unknown convention: %v", err)
	}
	e, _ := KMeansFor(knn.ExactName, "strict", 0)
	if _, err := e.Run(context.Background(), x, 25, 1<<33); !errors.Is(err, ErrBadInput) {
		t.Fatalf("seed 2^33: %v", err)
	}
}
