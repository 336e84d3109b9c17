package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestAssignEmulationMatchesCPU: the GPU nearest-centroid kernel (emulated)
// gives clustering.NearestCentroids' assignments and distances bit for bit
// whichever CPU kernel runs (make test runs this package once per level).
func TestAssignEmulationMatchesCPU(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	for _, kind := range []string{"gauss", "grid", "dups"} {
		for _, s := range []struct{ n, k, d int }{{1, 1, 1}, {300, 7, 5}, {517, 130, 33}, {64, 64, 16}} {
			x := randMatrix(rng, s.n, s.d, kind)
			c := randMatrix(rng, s.k, s.d, kind)
			label := fmt.Sprintf("%s n=%d k=%d d=%d", kind, s.n, s.k, s.d)
			wa, wd, err := clustering.NearestCentroids(context.Background(), x, c, 2)
			if err != nil {
				t.Fatal(err)
			}
			ga, gd, err := nearestCentroids(context.Background(), x, c, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ga, wa) {
				t.Fatalf("%s: assignments differ from clustering.NearestCentroids", label)
			}
			for i := range gd {
				if math.Float32bits(gd[i]) != math.Float32bits(wd[i]) {
					t.Fatalf("%s: row %d: dist %v, CPU %v", label, i, gd[i], wd[i])
				}
			}
		}
	}
	if _, _, err := nearestCentroids(context.Background(), mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{1, 2}}, mat32.Matrix{Cols: 2}, true); err == nil {
		t.Fatal("no centroids accepted")
	}
}

// TestDeviceAssign: the device kernel equals its emulation (needs a GPU).
func TestDeviceAssign(t *testing.T) {
	requireDevice(t)
	rng := rand.New(rand.NewSource(13))
	for _, kind := range []string{"gauss", "grid", "dups"} {
		x, c := randMatrix(rng, 20000, 128, kind), randMatrix(rng, 500, 128, kind)
		wa, wd, err := clustering.NearestCentroids(context.Background(), x, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		ga, gd, err := NearestCentroids(context.Background(), x, c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ga, wa) || !slices.Equal(gd, wd) {
			t.Fatalf("%s: GPU assignment differs from clustering.NearestCentroids", kind)
		}
	}
}
