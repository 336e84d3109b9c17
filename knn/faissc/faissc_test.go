//go:build faiss

package faissc

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
)

func randRows(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func TestVersion(t *testing.T) {
	v := Version()
	if !strings.HasPrefix(v, "faiss ") || !strings.Contains(v, "libfaiss_c") {
		t.Fatalf("Version() = %q", v)
	}
	if LibraryPath() == "" {
		t.Fatal("libfaiss_c not found among loaded objects")
	}
	t.Log(v)
}

func TestIndexAPI(t *testing.T) {
	idx, err := NewIndexFlatIP(3)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Free()
	if idx.D() != 3 || idx.MetricType() != InnerProduct || idx.Ntotal() != 0 {
		t.Fatalf("fresh index: d=%d metric=%v ntotal=%d", idx.D(), idx.MetricType(), idx.Ntotal())
	}
	if err := idx.Add([]float32{1, 0, 0, 0, 2, 0, 0, 0, 3}); err != nil {
		t.Fatal(err)
	}
	if idx.Ntotal() != 3 {
		t.Fatalf("ntotal = %d", idx.Ntotal())
	}
	dist, lab, err := idx.Search([]float32{1, 1, 1, 0, 0, -1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Query (1,1,1): inner products 1, 2, 3 → ids 2, 1, 0; slot 4 is padding.
	if lab[0] != 2 || lab[1] != 1 || lab[2] != 0 || lab[3] != -1 || dist[0] != 3 || dist[1] != 2 || dist[2] != 1 {
		t.Fatalf("query 0: %v %v", lab[:4], dist[:4])
	}
	// Query (0,0,-1): 0, 0, -3 → ids {0,1} (faiss's tie order), then 2.
	if lab[4]+lab[5] != 1 || lab[6] != 2 || lab[7] != -1 || dist[4] != 0 || dist[5] != 0 || dist[6] != -3 {
		t.Fatalf("query 1: %v %v", lab[4:], dist[4:])
	}
	if err := idx.Reset(); err != nil || idx.Ntotal() != 0 {
		t.Fatalf("reset: %v ntotal=%d", err, idx.Ntotal())
	}

	l2, err := NewIndexFlatL2(2)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Free()
	l2.SetThreads(1)
	if err := l2.Add([]float32{0, 0, 3, 4}); err != nil {
		t.Fatal(err)
	}
	dist, lab, err = l2.Search([]float32{3, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// ‖(3,0)−(0,0)‖² = 9, ‖(3,0)−(3,4)‖² = 16.
	if lab[0] != 0 || lab[1] != 1 || dist[0] != 9 || dist[1] != 16 {
		t.Fatalf("L2: %v %v", lab, dist)
	}
}

func TestBadArguments(t *testing.T) {
	if _, err := NewIndexFlat(0, L2); !errors.Is(err, ErrInvalid) {
		t.Errorf("d = 0: %v", err)
	}
	if _, err := NewIndexFlat(4, Metric(9)); !errors.Is(err, ErrInvalid) {
		t.Errorf("metric 9: %v", err)
	}
	idx, err := NewIndexFlatL2(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Add([]float32{1, 2, 3}); !errors.Is(err, ErrInvalid) {
		t.Errorf("ragged add: %v", err)
	}
	if _, _, err := idx.Search([]float32{1, 2}, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("k = 0: %v", err)
	}
	if err := idx.SearchInto([]float32{1, 2}, 2, make([]float32, 1), make([]int64, 2)); !errors.Is(err, ErrInvalid) {
		t.Errorf("short buffer: %v", err)
	}
	idx.Free()
	idx.Free() // idempotent
	if err := idx.Add([]float32{1, 2}); !errors.Is(err, ErrInvalid) {
		t.Errorf("after Free: %v", err)
	}
	if _, err := KMeans([]float32{1, 2, 3}, 2, 2, 1, ClusteringParams{NIter: 1, NRedo: 1}, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("kmeans ragged: %v", err)
	}
	if _, err := KMeans([]float32{1, 2}, 1, 2, 1, ClusteringParams{NIter: 1, NRedo: 0}, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("kmeans nredo 0: %v", err)
	}
	if _, err := KMeans([]float32{1, 2}, 1, 2, 1, ClusteringParams{NIter: 1, NRedo: 1, Seed: 1 << 40}, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("kmeans 64-bit seed: %v", err)
	}
}

// TestFaissErrorPropagation drives faiss into throwing and checks that its
// own message arrives as a Go error — from many goroutines at once, so a
// message read on the wrong OS thread (faiss_get_last_error is
// thread-local) would show up as a wrong or empty text.
func TestFaissErrorPropagation(t *testing.T) {
	idx, err := NewIndexFlatL2(2)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Free()
	if err := idx.Add([]float32{0, 0, 1, 1}); err != nil {
		t.Fatal(err)
	}
	const g = 64
	errs := make(chan error, 2*g)
	for i := 0; i < g; i++ {
		go func() { errs <- idx.searchRaw(1, []float32{0, 0}, 0, nil, nil) }()
		go func() {
			// faiss: "Number of training points (3) should be at least as
			// large as number of clusters (5)".
			_, err := KMeans(make([]float32, 6), 3, 2, 5, ClusteringParams{NIter: 2, NRedo: 1}, 1)
			errs <- err
		}()
	}
	for i := 0; i < 2*g; i++ {
		err := <-errs
		if !errors.Is(err, ErrFaiss) {
			t.Fatalf("not a faiss error: %v", err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "k > 0") && !strings.Contains(msg, "at least as large as number of clusters (5)") {
			t.Fatalf("wrong faiss message: %v", err)
		}
	}
	// Non-finite input: faiss's own NaN check in Clustering::train.
	x := randRows(rand.New(rand.NewSource(1)), 20, 2)
	x[7] = float32(math.NaN())
	if _, err := KMeans(x, 20, 2, 3, ClusteringParams{NIter: 2, NRedo: 1}, 0); !errors.Is(err, ErrFaiss) || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("NaN input: %v", err)
	}
}

// TestKMeansSmall: three well-separated blobs on a line; faiss must find the
// three blob means and assign by blob, with the stats history present.
func TestKMeansSmall(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	centres := []float32{-10, 0, 10}
	n := 300
	x := make([]float32, n)
	blob := make([]int, n)
	sum := make([]float64, 3)
	for i := range x {
		blob[i] = i % 3
		x[i] = centres[blob[i]] + float32(rng.NormFloat64()*0.1)
		sum[blob[i]] += float64(x[i])
	}
	out, err := KMeans(x, n, 1, 3, ClusteringParams{NIter: 20, NRedo: 1, MinPointsPerCentroid: 1, MaxPointsPerCentroid: 1 << 20, Seed: 1234}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Map each centroid to its blob and compare with the blob mean.
	for c, v := range out.Centroids {
		b := 0
		for j := range centres {
			if math.Abs(float64(v-centres[j])) < math.Abs(float64(v-centres[b])) {
				b = j
			}
		}
		if mean := sum[b] / 100; math.Abs(float64(v)-mean) > 1e-4 {
			t.Errorf("centroid %d = %v, blob %d mean %v", c, v, b, mean)
		}
	}
	for i := range x {
		c := out.Assign[i]
		if math.Abs(float64(out.Centroids[c]-centres[blob[i]])) > 1 {
			t.Fatalf("row %d (blob %d) assigned to centroid %v", i, blob[i], out.Centroids[c])
		}
		want := (float64(x[i]) - float64(out.Centroids[c])) * (float64(x[i]) - float64(out.Centroids[c]))
		if math.Abs(float64(out.Dist[i])-want) > 1e-4 {
			t.Fatalf("row %d distance %v, want %v", i, out.Dist[i], want)
		}
	}
	if len(out.Obj) != 20 || len(out.Splits) != 20 {
		t.Fatalf("stats: %d objectives, %d splits", len(out.Obj), len(out.Splits))
	}
	for i := 1; i < len(out.Obj); i++ {
		if out.Obj[i] > out.Obj[i-1]*(1+1e-5) {
			t.Fatalf("Lloyd objective went up: %v", out.Obj)
		}
	}
}

// TestNoLeak: every C object (indexes, clustering objects, error strings) is
// freed: the C heap in use (MallocInUse) must come back to where it was
// after many iterations. Each iteration creates a 3000×64 index (768 KB), a
// k-means with its own index and clustering object, and 21 failing calls
// (each allocating an error string of ~250 B). A few KB of drift come from
// new OS threads (glibc/libgomp per-thread state). Also run with -count=50.
func TestNoLeak(t *testing.T) {
	if MallocInUse() < 0 {
		t.Skip("mallinfo2 unavailable")
	}
	rng := rand.New(rand.NewSource(3))
	n, d := 3000, 64
	x := randRows(rng, n, d)
	iters := 60
	if testing.Short() {
		iters = 20
	}
	run := func() {
		idx, err := NewIndexFlatL2(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(x); err != nil {
			t.Fatal(err)
		}
		if _, _, err := idx.Search(x[:64*d], 10); err != nil {
			t.Fatal(err)
		}
		for e := 0; e < 20; e++ {
			if err := idx.searchRaw(1, x[:d], -1, nil, nil); err == nil {
				t.Fatal("k = -1 accepted")
			}
		}
		idx.Free()
		if _, err := KMeans(x, n, d, 16, ClusteringParams{NIter: 3, NRedo: 1, MaxPointsPerCentroid: 1 << 20}, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := KMeans(x[:4*d], 4, d, 8, ClusteringParams{NIter: 3, NRedo: 1}, 0); err == nil {
			t.Fatal("k > n accepted")
		}
	}
	grew := HeapGrowth(iters, run)
	t.Logf("C heap grew by %d B over %d iterations", grew, iters)
	// One leaked index is 768 KB; leaked error strings would be ≥ 300 KB.
	if grew > 64<<10 {
		t.Fatalf("C heap grew by %d B over %d iterations: leak", grew, iters)
	}

}
