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
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
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

// TestDeviceMetrics: every metric of the full suite is identical with the
// GPU backend (k-NN and k-means assignment on the device) and with the
// exact CPU backend (h-style data), whichever CPU kernel runs.
func TestDeviceMetrics(t *testing.T) {
	requireDevice(t)
	x, lab := classData(1, 20000, 128, 500, 0.7)
	for _, conv := range []metrics.Convention{metrics.Strict, metrics.Roth, metrics.PML} {
		run := func(s knn.Searcher) *metrics.Result {
			r, err := metrics.Evaluate(context.Background(), metrics.Input{Emb: x, Labels: lab}, metrics.Options{Backend: metrics.Backend{Searcher: s}, Convention: conv})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		want, got := run(knn.Exact{}), run(Searcher{})
		for key, v := range want.Metrics {
			g, ok := got.Metrics[key]
			if !ok || math.Float64bits(g) != math.Float64bits(v) && !(math.IsNaN(g) && math.IsNaN(v)) {
				t.Fatalf("%s %s: gpu %v, exact %v", conv, key, g, v)
			}
		}
		t.Logf("%s: %d metrics identical; knn exact %.3fs, gpu %.3fs; kmeans exact %.3fs, gpu %.3fs", conv, len(want.Metrics),
			want.Timings["knn"], got.Timings["knn"], want.Timings["kmeans"], got.Timings["kmeans"])
	}
}

// TestDeviceSpeed: the speed runs of docs/gpu.md (DMLBENCH_GPU_BENCH=1).
func TestDeviceSpeed(t *testing.T) {
	requireDevice(t)
	if os.Getenv("DMLBENCH_GPU_BENCH") == "" {
		t.Skip("set DMLBENCH_GPU_BENCH=1 for the speed runs")
	}
	ctx := context.Background()
	// SOP-size full metric suite (60 502 × 128, 11 318 classes): k-NN and
	// k-means on the GPU, then everything on the CPU's best kernels.
	x, lab := classData(7, 60502, 128, 11318, 0.7)
	var res []*metrics.Result
	for _, s := range []knn.Searcher{Searcher{}, knn.Exact{}} {
		var r *metrics.Result
		d, err := timed(func() (err error) {
			r, err = metrics.Evaluate(ctx, metrics.Input{Emb: x, Labels: lab}, metrics.Options{Backend: metrics.Backend{Searcher: s}})
			return
		})
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
		t.Logf("SOP-size suite, %s: %.3fs total; stages %v", s.Name(), d.Seconds(), r.Timings)
	}
	var differ []string
	for key, v := range res[1].Metrics {
		if g := res[0].Metrics[key]; math.Float64bits(g) != math.Float64bits(v) && !(math.IsNaN(g) && math.IsNaN(v)) {
			differ = append(differ, fmt.Sprintf("%s gpu %v exact %v", key, g, v))
		}
	}
	t.Logf("SOP-size suite: %d metrics, differing between gpu and exact (CPU k-means kernel %s): %v", len(res[1].Metrics), clustering.KernelName(), differ)
	// 1M × 128 gallery, 10 000 queries, k = 100.
	g, _ := classData(8, 1000000, 128, 100000, 0.7)
	q, _ := classData(9, 10000, 128, 100000, 0.7)
	var nb *knn.Neighbors
	for rep := 0; rep < 3; rep++ {
		d, err := timed(func() (err error) { nb, err = Searcher{}.Search(ctx, q, g, 100, knn.Options{}); return })
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("1M×128 gallery, 10k queries, k=100, gpu run %d: %.3fs", rep, d.Seconds())
	}
	// Ids against exact on the first 1 000 queries (the CPU's share of the
	// time stays small).
	q1 := mat32.Matrix{Rows: 1000, Cols: q.Cols, Data: q.Data[:1000*q.Cols]}
	var ex *knn.Neighbors
	d, err := timed(func() (err error) { ex, err = knn.Exact{}.Search(ctx, q1, g, 100, knn.Options{}); return })
	if err != nil {
		t.Fatal(err)
	}
	sub := &knn.Neighbors{N: 1000, K: 100, IDs: nb.IDs[:1000*100], Dist: nb.Dist[:1000*100]}
	sameNeighbors(t, "1M gallery, first 1000 queries", sub, ex)
	t.Logf("1M×128 gallery, first 1000 queries: ids and distances identical to exact (exact %.3fs)", d.Seconds())
	if dir := os.Getenv("DMLBENCH_GPU_OUT"); dir != "" {
		for _, f := range []struct {
			name string
			m    mat32.Matrix
		}{{"gallery.npy", g}, {"queries.npy", q}} {
			if err := arrays.SaveNPY(filepath.Join(dir, f.name), f.m); err != nil {
				t.Fatal(err)
			}
		}
		if err := arrays.SaveLabelsNPY(filepath.Join(dir, "gpu_ids.npy"), nb.IDs); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote gallery.npy, queries.npy, gpu_ids.npy (10000·100 ids, row-major) to %s", dir)
	}
}
