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

// The command layer's wiring (cmd/dmlbench/gpu.go), for the tests of this
// package that run metrics or clustering.KMeansFor on the GPU backends.
func init() {
	for _, name := range []string{Name, AutoName} {
		clustering.Engines.Register(name, func(opt clustering.KMeansOptions) (*clustering.KMeansEngine, error) {
			a, err := OpenAssigner(name)
			if err != nil || a == nil {
				return nil, err
			}
			return clustering.AssignerEngine(*a, opt), nil
		})
	}
}

// TestKMeansForGPUBackends: OpenAssigner, wired as the command layer wires
// it, gives clustering.KMeansFor the GPU assignment: "auto" falls back to
// the CPU kernel without a device, "gpu" fails there with the reason, with
// a device both name the GPU, and other names get nothing.
func TestKMeansForGPUBackends(t *testing.T) {
	if a, err := OpenAssigner("exact"); a != nil || err != nil {
		t.Fatalf("OpenAssigner(exact) = %v, %v", a, err)
	}
	ok, why := Available()
	auto, err := clustering.KMeansFor(AutoName, "strict", 0)
	if err != nil {
		t.Fatal(err)
	}
	g, gerr := clustering.KMeansFor(Name, "pml", 0)
	if !ok {
		if auto.Options().Assigner != nil || !strings.Contains(auto.String(), "CPU") {
			t.Fatalf("auto without a GPU (%s): %s", why, auto)
		}
		if gerr == nil || !strings.Contains(gerr.Error(), why) {
			t.Fatalf("gpu without a GPU: err %v, want one saying %q", gerr, why)
		}
		return
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	for _, e := range []*clustering.KMeansEngine{auto, g} {
		if _, isGPU := e.Options().Assigner.(Assigner); !isGPU || !strings.Contains(e.String(), "GPU") {
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
