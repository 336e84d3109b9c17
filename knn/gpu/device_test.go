package gpu

// Tests that need a CUDA device. They skip with "no CUDA device: <reason>"
// elsewhere; docs/gpu.md gives the commands for a device session (a test
// binary built here with CGO_ENABLED=0 go test -c, carried to the device).
// The speed runs also need DMLBENCH_GPU_BENCH=1; with DMLBENCH_GPU_OUT=DIR
// they write the 1M-row data and the GPU's neighbour ids there for the
// PyTorch anchor (testdata/torch_anchor.py).

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

func requireDevice(t *testing.T) {
	t.Helper()
	if ok, info := Available(); !ok {
		t.Skip(info)
	} else {
		t.Logf("device: %s; CPU: %d cores, distance kernel %s", info, runtime.NumCPU(), knn.KernelName())
	}
}

// classData is "h-style" data: n rows in dimension d around the centres of
// c classes (row i in class i mod c), unit Gaussian centres and noise σ.
func classData(seed int64, n, d, c int, sigma float64) (mat32.Matrix, []int32) {
	rng := rand.New(rand.NewSource(seed))
	cent := make([]float64, c*d)
	for i := range cent {
		cent[i] = rng.NormFloat64()
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	lab := make([]int32, n)
	for i := 0; i < n; i++ {
		lab[i] = int32(i % c)
		for p := 0; p < d; p++ {
			x.Data[i*d+p] = float32(cent[int(lab[i])*d+p] + sigma*rng.NormFloat64())
		}
	}
	return x, lab
}

// positives watches each query's same-class rows (as the retrieval metrics do).
func positives(lab []int32, excl bool, maxRank int) *knn.Watch {
	by := map[int32][]int32{}
	for i, l := range lab {
		by[l] = append(by[l], int32(i))
	}
	w := &knn.Watch{IDs: make([][]int32, len(lab)), MaxRank: maxRank}
	for i, l := range lab {
		w.IDs[i] = []int32{}
		for _, j := range by[l] {
			if !excl || int(j) != i {
				w.IDs[i] = append(w.IDs[i], j)
			}
		}
	}
	return w
}

func timed(f func() error) (time.Duration, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

// TestDeviceParity: neighbour ids, distances and watch ranks identical to
// knn.Exact on h-style data (20 000 × 128, 500 classes), tie-heavy
// integer data and duplicates, L2 and IP, leave-one-out and query/gallery.
func TestDeviceParity(t *testing.T) {
	requireDevice(t)
	ctx := context.Background()
	h, hl := classData(1, 20000, 128, 500, 0.7)
	rng := rand.New(rand.NewSource(2))
	cases := []struct {
		name string
		q, x mat32.Matrix
		opt  knn.Options
		k    int
	}{
		{"h-style L2 leave-one-out", h, h, knn.Options{Exclude: knn.ExcludeSelf, Watch: positives(hl, true, 1000)}, 100},
		{"h-style IP leave-one-out", h, h, knn.Options{Metric: knn.IP, Exclude: knn.ExcludeSelf}, 100},
		{"h-style k=1000", h, h, knn.Options{Exclude: knn.ExcludeSelf}, 1000},
		{"tie-heavy grid", randMatrix(rng, 20000, 128, "grid"), mat32.Matrix{}, knn.Options{Exclude: knn.ExcludeSelf}, 50},
		{"duplicates", randMatrix(rng, 20000, 32, "dups"), mat32.Matrix{}, knn.Options{Exclude: knn.ExcludeSelf}, 30},
		{"query/gallery", randMatrix(rng, 3000, 128, "gauss"), randMatrix(rng, 50000, 128, "gauss"), knn.Options{}, 100},
	}
	for _, c := range cases {
		if c.x.Rows == 0 {
			c.x = c.q
		}
		var want, got *knn.Neighbors
		tc, err := timed(func() (err error) { want, err = knn.Exact{}.Search(ctx, c.q, c.x, c.k, c.opt); return })
		if err != nil {
			t.Fatal(err)
		}
		tg, err := timed(func() (err error) { got, err = Searcher{}.Search(ctx, c.q, c.x, c.k, c.opt); return })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sameNeighbors(t, c.name, got, want)
		t.Logf("%s: identical; exact %.3fs, gpu %.3fs", c.name, tc.Seconds(), tg.Seconds())
	}
}

// TestDeviceMatchesEmulation runs small cases on the device and in the
// emulation, including tiny buffers (overflow re-runs) and many blocks.
func TestDeviceMatchesEmulation(t *testing.T) {
	requireDevice(t)
	rng := rand.New(rand.NewSource(4))
	for _, kind := range []string{"gauss", "grid", "dups"} {
		x := randMatrix(rng, 1500, 37, kind)
		for _, s := range []Searcher{{}, {Capacity: 1, StateBytes: 1}} {
			opt := knn.Options{Exclude: knn.ExcludeSelf, Watch: watchFor(x.Rows, x.Rows, 13, 40, true)}
			got, err := s.Search(context.Background(), x, x, 45, opt)
			if err != nil {
				t.Fatal(err)
			}
			e := s
			e.emulate = true
			want, err := e.Search(context.Background(), x, x, 45, opt)
			if err != nil {
				t.Fatal(err)
			}
			sameNeighbors(t, fmt.Sprintf("%s %+v", kind, s), got, want)
		}
	}
}
