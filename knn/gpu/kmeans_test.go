package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/knn"
)

// sameKMeans fails unless two k-means results are bit for bit the same:
// assignments, centroids, training history, objective, splits.
func sameKMeans(t *testing.T, label string, got, want *clustering.KMeansResult) {
	t.Helper()
	if !slices.Equal(got.Assign, want.Assign) {
		n := 0
		for i := range got.Assign {
			if got.Assign[i] != want.Assign[i] {
				n++
			}
		}
		t.Fatalf("%s: %d of %d assignments differ", label, n, len(got.Assign))
	}
	for i := range got.Centroids.Data {
		if math.Float32bits(got.Centroids.Data[i]) != math.Float32bits(want.Centroids.Data[i]) {
			t.Fatalf("%s: centroid value %d: %v, CPU %v", label, i, got.Centroids.Data[i], want.Centroids.Data[i])
		}
	}
	if !slices.Equal(got.History, want.History) || got.Objective != want.Objective || got.Splits != want.Splits ||
		got.Iterations != want.Iterations || got.TrainPoints != want.TrainPoints || !slices.Equal(got.Warnings, want.Warnings) {
		t.Fatalf("%s: history/objective/splits differ: %v %v %d vs CPU %v %v %d", label,
			got.History, got.Objective, got.Splits, want.History, want.Objective, want.Splits)
	}
}

// TestKMeansAssignerEmulationMatchesCPU: clustering.KMeans with its
// assignment step on the GPU kernel (emulated: the same fused
// multiply-adds in the same order) gives the CPU's k-means bit for bit
// under the presets of the three conventions (strict and roth: every row
// trains; pml: at most 256 rows per centroid, a subsample when there are
// more, and faiss's too-few-points warning), on Gaussian data, small-integer
// data (exact ties) and duplicate-heavy data, whose identical initial
// centroids leave clusters empty and exercise faiss's empty-cluster split.
// Every CPU kernel level has this arithmetic (make test runs the package
// once per level).
func TestKMeansAssignerEmulationMatchesCPU(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	splits := 0
	for _, conv := range []string{"strict", "roth", "pml"} {
		for _, c := range []struct {
			kind    string
			n, d, k int
		}{
			{"gauss", 1500, 24, 40}, {"gauss", 2000, 8, 3}, {"grid", 900, 6, 30},
			{"dups", 1000, 12, 60}, {"dups", 700, 5, 90}, {"gauss", 64, 4, 64},
		} {
			x := randMatrix(rng, c.n, c.d, c.kind)
			label := fmt.Sprintf("%s %s n=%d d=%d k=%d", conv, c.kind, c.n, c.d, c.k)
			opt, err := clustering.KMeansPreset(conv)
			if err != nil {
				t.Fatal(err)
			}
			opt.Threads = 2
			want, err := clustering.KMeans(context.Background(), x, c.k, opt)
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			opt.Assigner = Assigner{emulate: true}
			got, err := clustering.KMeans(context.Background(), x, c.k, opt)
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			sameKMeans(t, label, got, want)
			splits += want.Splits
			if len(got.PairEvals) != len(got.History)+1 || got.PartialRowSearches != 0 {
				t.Fatalf("%s: %d passes counted for %d iterations, %d partial rows", label, len(got.PairEvals), len(got.History), got.PartialRowSearches)
			}
		}
	}
	if splits == 0 {
		t.Fatal("no empty-cluster split happened: the duplicate-heavy cases no longer exercise it")
	}
}

// TestBackendsKMeans: the searchers of "gpu" and "auto" carry their
// k-means's assignment step (clustering.KMeansOn): "auto" without a
// device is knn.Exact with the CPU kernel, "gpu" there fails with the
// reason; with a device both assign on it.
func TestBackendsKMeans(t *testing.T) {
	opt, _ := clustering.KMeansPreset("strict")
	ok, why := Available()
	auto, err := NewAuto()
	if err != nil {
		t.Fatal(err)
	}
	g, gerr := New()
	if !ok {
		if e := clustering.KMeansOn(auto, opt); e.Options().Assigner != nil || !strings.Contains(e.String(), "CPU") {
			t.Fatalf("auto without a GPU (%s): %s", why, e)
		}
		if gerr == nil || !strings.Contains(gerr.Error(), why) {
			t.Fatalf("gpu without a GPU: err %v, want one saying %q", gerr, why)
		}
		return
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	for _, s := range []knn.Searcher{auto, g} {
		e := clustering.KMeansOn(s, opt)
		if _, isGPU := e.Options().Assigner.(Searcher); !isGPU || s.(Searcher).Device == "" {
			t.Fatalf("%s: assigner %T", e, e.Options().Assigner)
		}
	}
}

// TestDeviceKMeans: clustering.KMeans with the device assignment equals the
// CPU's on SOP-shaped data (needs a GPU).
func TestDeviceKMeans(t *testing.T) {
	requireDevice(t)
	rng := rand.New(rand.NewSource(32))
	for _, kind := range []string{"gauss", "dups"} {
		x := randMatrix(rng, 20000, 128, kind)
		for _, conv := range []string{"strict", "pml"} {
			opt, _ := clustering.KMeansPreset(conv)
			want, err := clustering.KMeans(context.Background(), x, 500, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Assigner = Assigner{}
			got, err := clustering.KMeans(context.Background(), x, 500, opt)
			if err != nil {
				t.Fatal(err)
			}
			sameKMeans(t, conv+" "+kind, got, want)
		}
	}
}
