//go:build faiss

package clustering

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/knn/faissc"
)

// sphereRows: n random unit vectors (unstructured, DML-embedding-like).
func sphereRows(rng *rand.Rand, n, d int) mat32.Matrix {
	x := make([]float32, n*d)
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		var s float64
		for j := range row {
			v := rng.NormFloat64()
			row[j], s = float32(v), s+v*v
		}
		for j := range row {
			row[j] = float32(float64(row[j]) / math.Sqrt(s))
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: x}
}

// classRows: n rows from c classes, class means on the unit sphere, noise
// sigma per coordinate, then L2-normalised (like embeddings of a test
// split); the class of row i is i % c.
func classRows(rng *rand.Rand, n, d, c int, sigma float64) mat32.Matrix {
	means := sphereRows(rng, c, d)
	x := make([]float32, n*d)
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		mu := means.Row(i % c)
		var s float64
		for j := range row {
			v := float64(mu[j]) + sigma*rng.NormFloat64()
			row[j], s = float32(v), s+v*v
		}
		for j := range row {
			row[j] = float32(float64(row[j]) / math.Sqrt(s))
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: x}
}

// checkResult verifies a k-means result independently: shapes, every row
// assigned to a nearest centroid (float64, up to 1e-5 rounding), Objective
// equal to the recomputed sum of squared distances.
func checkResult(t *testing.T, label string, x mat32.Matrix, k int, r *KMeansResult) {
	t.Helper()
	if len(r.Assign) != x.Rows || r.Centroids.Rows != k || r.Centroids.Cols != x.Cols || len(r.Centroids.Data) != k*x.Cols {
		t.Fatalf("%s: shapes: %d assignments, centroids %d×%d", label, len(r.Assign), r.Centroids.Rows, r.Centroids.Cols)
	}
	var obj float64
	for i := 0; i < x.Rows; i++ {
		best := math.Inf(1)
		for c := 0; c < k; c++ {
			best = math.Min(best, sqDist64(x.Row(i), r.Centroids.Row(c)))
		}
		a := r.Assign[i]
		if a < 0 || int(a) >= k {
			t.Fatalf("%s: row %d assigned to %d", label, i, a)
		}
		got := sqDist64(x.Row(i), r.Centroids.Row(int(a)))
		if got > best+1e-5 {
			t.Fatalf("%s: row %d assigned to centroid %d at %v, nearest is at %v", label, i, a, got, best)
		}
		obj += got
	}
	if math.Abs(obj-r.Objective) > 1e-9*math.Max(1, obj) {
		t.Fatalf("%s: Objective %v, recomputed %v", label, r.Objective, obj)
	}
}

// TestFaissKMeansVsGo: faiss's k-means and the pure-Go KMeans (the same
// algorithm with the same random streams) reach the same objective, up to
// the rounding of faiss's BLAS distances (1e-5 relative), with the Roth
// preset and with PML's subsampling, on unstructured unit vectors; the
// class-structured comparisons are TestKMeansFaissGolden and
// TestPureGoKMeansMatchesFaissMetrics.
func TestFaissKMeansVsGo(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 4000
	if testing.Short() {
		n = 1500
	}
	ctx := context.Background()
	roth := DefaultKMeansOptions()
	pml := KMeansOptions{NIter: 20, Seed: 1234, MinPointsPerCentroid: 39, MaxPointsPerCentroid: 256}
	for _, c := range []struct {
		name string
		x    mat32.Matrix
		k    int
		opt  KMeansOptions
	}{
		{"sphere d=32 k=32 roth", sphereRows(rng, n, 32), 32, roth},
		{"sphere d=64 k=10 pml", sphereRows(rng, n, 64), 10, pml},
	} {
		f, err := FaissKMeans(ctx, c.x, c.k, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkResult(t, c.name+" faiss", c.x, c.k, f)
		g, err := KMeans(ctx, c.x, c.k, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rel := (f.Objective - g.Objective) / g.Objective
		t.Logf("%s: faiss %.6g (train %d, %d iters, %d splits), Go %.6g: %+.3f%%", c.name, f.Objective, f.TrainPoints, f.Iterations, f.Splits, g.Objective, 100*rel)
		if math.Abs(rel) > 1e-5 {
			t.Errorf("%s: faiss objective %v vs Go %v differ by %.2g%%", c.name, f.Objective, g.Objective, 100*rel)
		}
		same := 0
		for i, a := range f.Assign {
			if g.Assign[i] == a {
				same++
			}
		}
		if same < len(f.Assign)*999/1000 {
			t.Errorf("%s: only %d of %d assignments equal faiss's", c.name, same, len(f.Assign))
		}
		if f.TrainPoints != g.TrainPoints || f.Iterations != g.Iterations || !slices.Equal(f.Warnings, g.Warnings) {
			t.Errorf("%s: faiss train %d iters %d warnings %q; Go train %d iters %d warnings %q", c.name,
				f.TrainPoints, f.Iterations, f.Warnings, g.TrainPoints, g.Iterations, g.Warnings)
		}
	}
}

// TestFaissKMeansPresets: Roth's preset (20 iterations, seed 1234, no
// subsampling) is deterministic for a seed and records faiss's history;
// PML's max 256 points per centroid subsamples.
func TestFaissKMeansPresets(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	x := classRows(rng, 1200, 16, 8, 0.2)
	ctx := context.Background()
	roth := DefaultKMeansOptions()
	a, err := FaissKMeans(ctx, x, 8, roth)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FaissKMeans(ctx, x, 8, roth)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "roth", x, 8, a)
	if !slices.Equal(a.Centroids.Data, b.Centroids.Data) || !slices.Equal(a.Assign, b.Assign) {
		t.Fatal("same seed, different faiss k-means results")
	}
	if a.Iterations != 20 || len(a.History) != 20 || a.TrainPoints != 1200 || len(a.Warnings) != 0 {
		t.Fatalf("roth: iterations %d, history %d, train %d, warnings %q", a.Iterations, len(a.History), a.TrainPoints, a.Warnings)
	}
	// faiss's history is the objective before each update: non-increasing
	// (Lloyd), and the final recomputed objective is at most the last one.
	for i := 1; i < len(a.History); i++ {
		if a.History[i] > a.History[i-1]*(1+1e-5) {
			t.Fatalf("history increases: %v", a.History)
		}
	}
	if a.Objective > a.History[len(a.History)-1]*(1+1e-5) {
		t.Fatalf("final objective %v above last training objective %v", a.Objective, a.History[len(a.History)-1])
	}
	roth.Seed = 99
	c, err := FaissKMeans(ctx, x, 8, roth)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "seed 99", x, 8, c)

	pml := KMeansOptions{NIter: 10, Seed: 1234, MinPointsPerCentroid: 39, MaxPointsPerCentroid: 50}
	p, err := FaissKMeans(ctx, x, 8, pml)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, "pml", x, 8, p)
	if p.TrainPoints != 400 || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "sampling 400 points out of 1200") {
		t.Fatalf("pml: train %d warnings %q", p.TrainPoints, p.Warnings)
	}
	// Too few points per centroid: a warning in Warnings, not on stderr.
	few, err := FaissKMeans(ctx, mat32.Matrix{Rows: 40, Cols: 16, Data: x.Data[:40*16]}, 8, pml)
	if err != nil {
		t.Fatal(err)
	}
	if len(few.Warnings) != 1 || !strings.Contains(few.Warnings[0], "please provide at least 312") {
		t.Fatalf("few: warnings %q", few.Warnings)
	}
	// n == k: faiss copies the rows, no iteration.
	eq, err := FaissKMeans(ctx, mat32.Matrix{Rows: 8, Cols: 16, Data: x.Data[:8*16]}, 8, DefaultKMeansOptions())
	if err != nil {
		t.Fatal(err)
	}
	if eq.Iterations != 0 || eq.Objective != 0 || !slices.Equal(eq.Centroids.Data, x.Data[:8*16]) {
		t.Fatalf("n == k: iterations %d objective %v", eq.Iterations, eq.Objective)
	}
}

// TestFaissKMeansHand: two obvious groups on a line; the centroids are the
// group means (hand computed) whatever the initialisation.
func TestFaissKMeansHand(t *testing.T) {
	x := mat32.Matrix{Rows: 6, Cols: 1, Data: []float32{0, 1, 2, 10, 11, 12}}
	r, err := FaissKMeans(context.Background(), x, 2, DefaultKMeansOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := slices.Clone(r.Centroids.Data)
	slices.Sort(c)
	if c[0] != 1 || c[1] != 11 {
		t.Fatalf("centroids %v, want 1 and 11", r.Centroids.Data)
	}
	// Objective: 2·(1² + 0 + 1²) = 4.
	if r.Objective != 4 || r.Assign[0] != r.Assign[2] || r.Assign[3] != r.Assign[5] || r.Assign[0] == r.Assign[3] {
		t.Fatalf("objective %v assign %v", r.Objective, r.Assign)
	}
}

func TestFaissKMeansBadInput(t *testing.T) {
	ctx := context.Background()
	x := mat32.Matrix{Rows: 4, Cols: 2, Data: []float32{0, 0, 1, 1, 2, 2, 3, 3}}
	nan := mat32.Matrix{Rows: 4, Cols: 2, Data: []float32{0, 0, 1, float32(math.NaN()), 2, 2, 3, 3}}
	opt := DefaultKMeansOptions()
	for _, c := range []struct {
		name string
		x    mat32.Matrix
		k    int
		opt  KMeansOptions
	}{
		{"k > n", x, 5, opt},
		{"k = 0", x, 0, opt},
		{"dim mismatch", mat32.Matrix{Rows: 4, Cols: 3, Data: x.Data}, 2, opt},
		{"empty", mat32.Matrix{Cols: 2}, 1, opt},
		{"zero dim", mat32.Matrix{Rows: 3}, 1, opt},
		{"NaN", nan, 2, opt},
		{"NIter < 0", x, 2, KMeansOptions{NIter: -1}},
		{"max < 0", x, 2, KMeansOptions{NIter: 2, MaxPointsPerCentroid: -1}},
		{"64-bit seed", x, 2, KMeansOptions{NIter: 2, Seed: 1 << 40}},
	} {
		if _, err := FaissKMeans(ctx, c.x, c.k, c.opt); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: err = %v, want ErrBadInput", c.name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := FaissKMeans(cctx, x, 2, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestFaissKMeansNoLeak: the C heap in use returns to its level after many
// runs (each allocates a Clustering, two indexes and faiss's buffers).
// Also run with -count=50.
func TestFaissKMeansNoLeak(t *testing.T) {
	if faissc.MallocInUse() < 0 {
		t.Skip("mallinfo2 unavailable")
	}
	x := sphereRows(rand.New(rand.NewSource(3)), 2000, 32)
	iters := 40
	if testing.Short() {
		iters = 15
	}
	run := func() {
		if _, err := FaissKMeans(context.Background(), x, 20, KMeansOptions{NIter: 5, Seed: 1, MaxPointsPerCentroid: 64}); err != nil {
			t.Fatal(err)
		}
	}
	grew := faissc.HeapGrowth(iters, run)
	t.Logf("C heap grew by %d B over %d runs", grew, iters)
	if grew > 64<<10 {
		t.Fatalf("C heap grew by %d B over %d runs: leak", grew, iters)
	}

}

// BenchmarkFaissKMeans: faiss's k-means next to the pure-Go KMeans with
// Roth's preset on 20 000 × 128 unit vectors, k = 100.
func BenchmarkFaissKMeans(b *testing.B) {
	if testing.Short() {
		b.Skip("slow")
	}
	x := sphereRows(rand.New(rand.NewSource(4)), 20000, 128)
	ctx := context.Background()
	for _, f := range []struct {
		name string
		fn   func(context.Context, mat32.Matrix, int, KMeansOptions) (*KMeansResult, error)
	}{{"faiss", FaissKMeans}, {"go", KMeans}} {
		b.Run(fmt.Sprintf("k=100/%s", f.name), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := f.fn(ctx, x, 100, DefaultKMeansOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestKMeansOnFaiss: in a faiss build, the faiss searchers' k-means is
// faiss's own (FaissKMeans with the convention's preset).
func TestKMeansOnFaiss(t *testing.T) {
	x := classRows(rand.New(rand.NewSource(12)), 800, 16, 10, 0.3)
	for _, backend := range []string{knn.FaissName, knn.FaissGPUName} {
		s, err := knn.New(backend)
		if err != nil {
			continue // faiss-gpu needs -tags faiss,cuda
		}
		opt, _ := KMeansPreset("pml")
		e := KMeansOn(s, opt)
		got, err := e.Run(context.Background(), x, 10, 5)
		if err != nil {
			t.Fatal(err)
		}
		opt.Seed = 5
		want, err := FaissKMeans(context.Background(), x, 10, opt)
		if err != nil {
			t.Fatal(err)
		}
		if e.String() != "faiss k-means" || !slices.Equal(got.Assign, want.Assign) || !slices.Equal(got.History, want.History) {
			t.Fatalf("%s: %s differs from FaissKMeans", backend, e)
		}
	}
}
