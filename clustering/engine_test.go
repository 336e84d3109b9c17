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

// countingSearcher is a k-NN searcher that is also a CentroidAssigner,
// as knn/gpu's Searcher is.
type countingSearcher struct {
	knn.Exact
	countingAssigner
}

func (countingSearcher) Name() string { return "counting" }

// TestKMeansOn: the CPU searchers (and none) give KMeans with the
// convention's preset; a searcher that is also a CentroidAssigner runs
// every assignment pass (NIter + 1) with the same results (it computes the
// same kernel); a seed beyond 32 bits is an error.
func TestKMeansOn(t *testing.T) {
	t.Parallel()
	x := clusteredMatrix(rand.New(rand.NewSource(3)), 600, 12, 20, 3)
	for _, conv := range []string{"strict", "roth", "pml"} {
		opt, _ := KMeansPreset(conv)
		opt.Seed = 77
		want, err := KMeans(context.Background(), x, 25, opt)
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		for _, s := range []knn.Searcher{nil, knn.Exact{}, knn.BruteForce{}, countingSearcher{countingAssigner: countingAssigner{&calls}}} {
			o := opt
			o.Threads = 1
			e := KMeansOn(s, o)
			before := calls.Load()
			got, err := e.Run(context.Background(), x, 25, 77)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Assign, want.Assign) || !reflect.DeepEqual(got.Centroids.Data, want.Centroids.Data) ||
				!reflect.DeepEqual(got.History, want.History) || got.Objective != want.Objective {
				t.Fatalf("%s %T (%s): result differs from KMeans", conv, s, e)
			}
			n := int(calls.Load() - before)
			if _, counting := s.(countingSearcher); counting {
				if n != opt.NIter+1 || !strings.Contains(e.String(), "counting") {
					t.Fatalf("%s: %d assigner calls (want %d), %s", conv, n, opt.NIter+1, e)
				}
			} else if e.Options().Assigner != nil || !strings.Contains(e.String(), "CPU") {
				t.Fatalf("%s %T: %s", conv, s, e)
			}
		}
	}
	strict, _ := KMeansPreset("strict")
	e := KMeansOn(knn.Exact{}, strict)
	if _, err := e.Run(context.Background(), x, 25, 1<<33); !errors.Is(err, ErrBadInput) {
		t.Fatalf("seed 2^33: %v", err)
	}
}
