package gpu_test

// The device tests that run metrics.Evaluate (metrics builds its backend
// table from this package, so they live outside it); they skip without a
// device, as device_test.go's do.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/knn/gpu"
	"github.com/dmlbench/dmlbench/metrics"
)

// TestDeviceMetrics: every metric of the full suite is identical with the
// GPU backend (k-NN and k-means assignment on the device) and with the
// exact CPU backend (h-style data), whichever CPU kernel runs.
func TestDeviceMetrics(t *testing.T) {
	gpu.RequireDevice(t)
	x, lab := gpu.ClassData(1, 20000, 128, 500, 0.7)
	for _, conv := range []metrics.Convention{metrics.Strict, metrics.Roth, metrics.PML} {
		run := func(s knn.Searcher) *metrics.Result {
			r, err := metrics.Evaluate(context.Background(), metrics.Input{Emb: x, Labels: lab}, metrics.Options{Backend: metrics.Backend{Searcher: s}, Convention: conv})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		want, got := run(knn.Exact{}), run(gpu.Searcher{})
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
	gpu.RequireDevice(t)
	if os.Getenv("DMLBENCH_GPU_BENCH") == "" {
		t.Skip("set DMLBENCH_GPU_BENCH=1 for the speed runs")
	}
	ctx := context.Background()
	// SOP-size full metric suite (60 502 × 128, 11 318 classes): k-NN and
	// k-means on the GPU, then everything on the CPU's best kernels.
	x, lab := gpu.ClassData(7, 60502, 128, 11318, 0.7)
	var res []*metrics.Result
	for _, s := range []knn.Searcher{gpu.Searcher{}, knn.Exact{}} {
		var r *metrics.Result
		d, err := gpu.Timed(func() (err error) {
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
	g, _ := gpu.ClassData(8, 1000000, 128, 100000, 0.7)
	q, _ := gpu.ClassData(9, 10000, 128, 100000, 0.7)
	var nb *knn.Neighbors
	for rep := 0; rep < 3; rep++ {
		d, err := gpu.Timed(func() (err error) { nb, err = gpu.Searcher{}.Search(ctx, q, g, 100, knn.Options{}); return })
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("1M×128 gallery, 10k queries, k=100, gpu run %d: %.3fs", rep, d.Seconds())
	}
	// Ids against exact on the first 1 000 queries (the CPU's share of the
	// time stays small).
	q1 := mat32.Matrix{Rows: 1000, Cols: q.Cols, Data: q.Data[:1000*q.Cols]}
	var ex *knn.Neighbors
	d, err := gpu.Timed(func() (err error) { ex, err = knn.Exact{}.Search(ctx, q1, g, 100, knn.Options{}); return })
	if err != nil {
		t.Fatal(err)
	}
	sub := &knn.Neighbors{N: 1000, K: 100, IDs: nb.IDs[:1000*100], Dist: nb.Dist[:1000*100]}
	gpu.SameNeighbors(t, "1M gallery, first 1000 queries", sub, ex)
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
