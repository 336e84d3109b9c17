//go:build faiss

package knn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn/faissc"
)

// unitRows returns n random rows of dimension d on the unit sphere.
func unitRows(rng *rand.Rand, n, d int) mat32.Matrix {
	data := make([]float32, n*d)
	for i := 0; i < n; i++ {
		row := data[i*d : (i+1)*d]
		var s float64
		for j := range row {
			v := rng.NormFloat64()
			row[j] = float32(v)
			s += v * v
		}
		inv := 1 / math.Sqrt(s)
		for j := range row {
			row[j] = float32(float64(row[j]) * inv)
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}
}

// intRows returns n rows with coordinates drawn from {0, …, levels−1}:
// every distance and inner product is a small integer, exact in float32
// (also through BLAS), so ties abound and must be ordered by index.
func intRows(rng *rand.Rand, n, d, levels int) mat32.Matrix {
	data := make([]float32, n*d)
	for i := range data {
		data[i] = float32(rng.Intn(levels))
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}
}

func trueDist(a, b []float32, m Metric) float64 {
	var s float64
	for t := range a {
		if m == L2 {
			d := float64(a[t]) - float64(b[t])
			s += d * d
		} else {
			s += float64(a[t]) * float64(b[t])
		}
	}
	return s
}

// checkNear verifies got against the float64 reference ref under the
// contract with rounding tolerance tol: same shape and -1 padding, distinct
// ids, self excluded when asked, and at every rank either the same id as the
// reference or an id whose true distance is within tol of the reference's
// (a near-tie that float32 rounding may legitimately swap). Reported
// distances must be within tol of the true ones. It returns the number of
// near-tie swaps.
func checkNear(t *testing.T, label string, got, ref *Neighbors, q, db mat32.Matrix, opt Options, tol float64) int {
	t.Helper()
	if got.N != ref.N || got.K != ref.K || len(got.IDs) != len(ref.IDs) || len(got.Dist) != len(ref.Dist) {
		t.Fatalf("%s: shape %d×%d, want %d×%d", label, got.N, got.K, ref.N, ref.K)
	}
	swaps := 0
	for i := 0; i < ref.N; i++ {
		gi, ri := got.IDsOf(i), ref.IDsOf(i)
		gd := got.DistOf(i)
		seen := map[int32]bool{}
		for r := range ri {
			if ri[r] < 0 || gi[r] < 0 {
				if ri[r] != gi[r] || gd[r] != ref.DistOf(i)[r] {
					t.Fatalf("%s: query %d rank %d: id %d dist %v, want id %d (padding)", label, i, r, gi[r], gd[r], ri[r])
				}
				continue
			}
			if int(gi[r]) >= db.Rows || seen[gi[r]] {
				t.Fatalf("%s: query %d rank %d: bad or repeated id %d", label, i, r, gi[r])
			}
			seen[gi[r]] = true
			if opt.Exclude == ExcludeSelf && int(gi[r]) == i {
				t.Fatalf("%s: query %d returned itself", label, i)
			}
			dg := trueDist(q.Row(i), db.Row(int(gi[r])), opt.Metric)
			dr := trueDist(q.Row(i), db.Row(int(ri[r])), opt.Metric)
			if math.Abs(float64(gd[r])-dg) > tol {
				t.Fatalf("%s: query %d rank %d: reported distance %v, true %v", label, i, r, gd[r], dg)
			}
			if gi[r] != ri[r] {
				if math.Abs(dg-dr) > tol {
					t.Fatalf("%s: query %d rank %d: id %d (d=%.9g), want %d (d=%.9g): distances differ by %.3g > %.3g",
						label, i, r, gi[r], dg, ri[r], dr, math.Abs(dg-dr), tol)
				}
				swaps++
			}
		}
	}
	return swaps
}

// checkExact requires identical ids and distances (integer data, where
// faiss's float32 arithmetic is exact).
func checkExact(t *testing.T, label string, got, ref *Neighbors) {
	t.Helper()
	if got.N != ref.N || got.K != ref.K {
		t.Fatalf("%s: shape %d×%d, want %d×%d", label, got.N, got.K, ref.N, ref.K)
	}
	for i := range ref.IDs {
		if got.IDs[i] != ref.IDs[i] || got.Dist[i] != ref.Dist[i] {
			q, r := i/ref.K, i%ref.K
			lo, hi := max(0, r-3), min(ref.K, r+4)
			t.Fatalf("%s: query %d rank %d: got id %d d=%v, want id %d d=%v\n got  %v %v\n want %v %v",
				label, q, r, got.IDs[i], got.Dist[i], ref.IDs[i], ref.Dist[i],
				got.IDsOf(q)[lo:hi], got.DistOf(q)[lo:hi], ref.IDsOf(q)[lo:hi], ref.DistOf(q)[lo:hi])
		}
	}
}

// prefix returns the first k columns of nb (a reference computed once at
// the largest depth serves every smaller k: the contract's order is total).
func prefix(nb *Neighbors, k int) *Neighbors {
	out := &Neighbors{N: nb.N, K: k, IDs: make([]int32, nb.N*k), Dist: make([]float32, nb.N*k)}
	for i := 0; i < nb.N; i++ {
		copy(out.IDsOf(i), nb.IDsOf(i)[:k])
		copy(out.DistOf(i), nb.DistOf(i)[:k])
	}
	return out
}

func TestFaissRegistered(t *testing.T) {
	if !FaissCompiled {
		t.Fatal("FaissCompiled = false under -tags faiss")
	}
	s, err := New(FaissName)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != FaissName {
		t.Fatalf("Name() = %q", s.Name())
	}
	v := FaissVersion()
	if !strings.HasPrefix(v, "faiss ") || !strings.Contains(v, "libfaiss_c") {
		t.Fatalf("FaissVersion() = %q", v)
	}
	t.Logf("FaissVersion: %s", v)
}

// TestFaissParityRandom: unit vectors (distinct distances). Ids equal the
// float64 BruteForce's and Exact's except where true distances are within
// 1e-6 (float32 rounding in faiss's BLAS path, ‖q‖²+‖x‖²−2⟨q,x⟩).
func TestFaissParityRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n, nq := 1000, 200
	if testing.Short() {
		n, nq = 400, 80
	}
	const tol = 1e-6
	ks := []int{1, 10, 150} // 150 ≥ 100: faiss's reservoir path
	kmax := ks[len(ks)-1]
	ctx := context.Background()
	for _, d := range []int{16, 128} {
		db := unitRows(rng, n, d)
		q := unitRows(rng, nq, d)
		small := unitRows(rng, 7, d) // < 20 queries: padded to faiss's BLAS path
		for _, m := range []Metric{L2, IP} {
			var refAll, exAll *Neighbors
			var err error
			for _, c := range []struct {
				name  string
				q     mat32.Matrix
				excl  Exclusion
				batch int
			}{
				{"self", db, ExcludeSelf, 0},
				{"self-batched", db, ExcludeSelf, 1},
				{"query", q, ExcludeNone, 0},
				{"few", small, ExcludeNone, 0},
			} {
				opt := Options{Metric: m, Exclude: c.excl}
				if c.name != "self-batched" { // same references as "self"
					if refAll, err = (BruteForce{}).Search(ctx, c.q, db, kmax, opt); err != nil {
						t.Fatal(err)
					}
					if exAll, err = (Exact{}).Search(ctx, c.q, db, kmax, opt); err != nil {
						t.Fatal(err)
					}
				}
				for _, k := range ks {
					label := fmt.Sprintf("d=%d %v k=%d %s", d, m, k, c.name)
					got, err := Faiss{BatchBytes: c.batch}.Search(ctx, c.q, db, k, opt)
					if err != nil {
						t.Fatalf("%s: %v", label, err)
					}
					sw := checkNear(t, label+" vs BruteForce", got, prefix(refAll, k), c.q, db, opt, tol)
					sw2 := checkNear(t, label+" vs Exact", got, prefix(exAll, k), c.q, db, opt, tol)
					if sw+sw2 > 0 {
						t.Logf("%s: %d/%d near-tie swaps (|Δd| ≤ %g) vs BruteForce/Exact", label, sw, sw2, tol)
					}
				}
			}
		}
	}
}

// TestFaissTies: integer data with massive ties, duplicates and
// self-exclusion. Exact equality with BruteForce (ties by lower index, also
// at the k-th cut-off, which needs the deeper re-search) on faiss's heap
// (k < 100) and reservoir (k ≥ 100) paths, single and multi-batch.
func TestFaissTies(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	n := 500
	if testing.Short() {
		n = 250
	}
	db := intRows(rng, n, 6, 3) // 3^6 = 729 possible rows: many duplicates
	q := intRows(rng, 50, 6, 3)
	ks := []int{1, 7, 99, 100, 250, n - 1, n + 5}
	ctx := context.Background()
	for _, m := range []Metric{L2, IP} {
		for _, c := range []struct {
			name  string
			q     mat32.Matrix
			excl  Exclusion
			batch int
		}{
			{"self", db, ExcludeSelf, 0},
			{"self-batched", db, ExcludeSelf, 1},
			{"all", db, ExcludeNone, 0},
			{"query", q, ExcludeNone, 1},
		} {
			opt := Options{Metric: m, Exclude: c.excl}
			refAll, err := BruteForce{}.Search(ctx, c.q, db, n+5, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range ks {
				label := fmt.Sprintf("%v k=%d %s", m, k, c.name)
				got, err := Faiss{BatchBytes: c.batch}.Search(ctx, c.q, db, k, opt)
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				checkExact(t, label, got, prefix(refAll, k))
			}
		}
	}
}

// TestFaissSelfExclusionByIndex: with duplicate rows, self-exclusion drops
// the query's own index only; its duplicate stays (distance 0).
func TestFaissSelfExclusionByIndex(t *testing.T) {
	db := mat32.Matrix{Rows: 4, Cols: 2, Data: []float32{
		0, 0,
		0, 0, // duplicate of row 0
		3, 0,
		0, 5,
	}}
	got, err := Faiss{}.Search(context.Background(), db, db, 3, Options{Metric: L2, Exclude: ExcludeSelf})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}}
	wantD := [][]float32{{0, 9, 25}, {0, 9, 25}, {9, 9, 34}, {25, 25, 34}}
	for i := range want {
		for r := range want[i] {
			if got.IDsOf(i)[r] != want[i][r] || got.DistOf(i)[r] != wantD[i][r] {
				t.Fatalf("query %d: %v %v, want %v %v", i, got.IDsOf(i), got.DistOf(i), want[i], wantD[i])
			}
		}
	}
	// k larger than the candidates: padding with id -1 and distance -Inf (IP).
	got, err = Faiss{}.Search(context.Background(), db, db, 6, Options{Metric: IP, Exclude: ExcludeSelf})
	if err != nil {
		t.Fatal(err)
	}
	// IP of row 3 (0,5): with 3 → 25, with 0,1,2 → 0 (tie by index).
	wantIDs := []int32{0, 1, 2, -1, -1, -1}
	ninf := float32(math.Inf(-1))
	wantDist := []float32{0, 0, 0, ninf, ninf, ninf}
	for r := range wantIDs {
		if got.IDsOf(3)[r] != wantIDs[r] || got.DistOf(3)[r] != wantDist[r] {
			t.Fatalf("IP query 3: %v %v, want %v %v", got.IDsOf(3), got.DistOf(3), wantIDs, wantDist)
		}
	}
	// Row 2 (3,0): its own IP 9 is excluded, all others are 0.
	// Row 0 (0,0): every IP is 0.
	for i, w := range map[int][]int32{2: {0, 1, 3, -1, -1, -1}, 0: {1, 2, 3, -1, -1, -1}} {
		if !slices.Equal(got.IDsOf(i), w) {
			t.Fatalf("IP query %d: %v, want %v", i, got.IDsOf(i), w)
		}
	}
}

// TestFaissThreadsDeterministic: the thread count must not change the
// neighbours. (OpenBLAS may round the last bit of a distance differently
// with another thread count, so distances are compared to 1e-6.)
func TestFaissThreadsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	db := unitRows(rng, 700, 24)
	ctx := context.Background()
	opt := Options{Metric: IP, Exclude: ExcludeSelf}
	ref, err := BruteForce{}.Search(ctx, db, db, 12, opt)
	if err != nil {
		t.Fatal(err)
	}
	var first *Neighbors
	for _, th := range []int{1, 2, 3, 0} {
		opt.Threads = th
		got, err := Faiss{}.Search(ctx, db, db, 12, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkNear(t, "threads="+strconv.Itoa(th), got, ref, db, db, opt, 1e-6)
		if first == nil {
			first = got
			continue
		}
		if !slices.Equal(got.IDs, first.IDs) {
			t.Fatalf("threads=%d: neighbour ids differ from threads=1", th)
		}
	}
}

func TestFaissBadInput(t *testing.T) {
	ctx := context.Background()
	a := mat32.Matrix{Rows: 3, Cols: 2, Data: make([]float32, 6)}
	b := mat32.Matrix{Rows: 3, Cols: 3, Data: make([]float32, 9)}
	c := mat32.Matrix{Rows: 2, Cols: 2, Data: make([]float32, 4)}
	cases := []struct {
		name  string
		q, db mat32.Matrix
		k     int
		opt   Options
	}{
		{"dim mismatch", a, b, 1, Options{}},
		{"k = 0", a, a, 0, Options{}},
		{"k < 0", a, a, -3, Options{}},
		{"empty db", mat32.Matrix{Cols: 2}, mat32.Matrix{Cols: 2}, 1, Options{}},
		{"self with unequal sizes", c, a, 1, Options{Exclude: ExcludeSelf}},
		{"ragged", mat32.Matrix{Rows: 3, Cols: 2, Data: make([]float32, 5)}, a, 1, Options{}},
		{"metric", a, a, 1, Options{Metric: Metric(7)}},
		{"zero dimension", mat32.Matrix{Rows: 2}, mat32.Matrix{Rows: 2}, 1, Options{}},
	}
	for _, c := range cases {
		_, err := Faiss{}.Search(ctx, c.q, c.db, c.k, c.opt)
		if !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: err = %v, want ErrBadInput", c.name, err)
		}
	}
	// Cancelled context.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (Faiss{}).Search(cctx, a, a, 1, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestFaissProgress(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	db := unitRows(rng, 300, 8)
	last, calls := 0, 0
	_, err := Faiss{BatchBytes: 1}.Search(context.Background(), db, db, 5, Options{
		Exclude: ExcludeSelf,
		Progress: func(done, total int) {
			if done <= last || total != 300 {
				t.Errorf("progress %d/%d after %d", done, total, last)
			}
			last = done
			calls++
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if last != 300 || calls < 2 {
		t.Fatalf("progress ended at %d after %d calls", last, calls)
	}
}

// TestFaissNoLeak: repeated searches (each creates, fills and frees a faiss
// index of 2000×32 floats = 256 KB) must leave the C heap where it was
// (faissc.MallocInUse); faissc's own test covers the raw binding and
// k-means. Also run as `go test -tags faiss -run NoLeak -count=50 ./knn`.
func TestFaissNoLeak(t *testing.T) {
	if faissc.MallocInUse() < 0 {
		t.Skip("mallinfo2 unavailable")
	}
	rng := rand.New(rand.NewSource(5))
	db := unitRows(rng, 2000, 32)
	qm := mat32.Matrix{Rows: 32, Cols: 32, Data: db.Data[:32*32]}
	ctx := context.Background()
	iters := 40
	if testing.Short() {
		iters = 15
	}
	run := func() {
		if _, err := (Faiss{}).Search(ctx, qm, db, 20, Options{Metric: L2}); err != nil {
			t.Fatal(err)
		}
		if _, err := (Faiss{}).Search(ctx, qm, db, 120, Options{Metric: IP}); err != nil {
			t.Fatal(err)
		}
	}
	grew := faissc.HeapGrowth(iters, run)
	t.Logf("C heap grew by %d B over %d iterations", grew, iters)
	if grew > 64<<10 {
		t.Fatalf("C heap grew by %d B over %d iterations (one index is 256 KB): leak", grew, iters)
	}

}

// BenchmarkFaissVsExact: knn.Exact and knn.Faiss side by side on the
// CUB-sized setting of Roth et al. 2020's evaluation (60 502 × 128, leave-one-out,
// inner product on unit vectors) at the depths of mAP@1000-style metrics
// (k = 1000) and R@k (k = 9). Run with
//
//	go test -tags faiss -run '^$' -bench FaissVsExact -benchtime 1x ./knn
func BenchmarkFaissVsExact(b *testing.B) {
	if testing.Short() {
		b.Skip("60 502 × 128 all-pairs search is too slow for -short")
	}
	rng := rand.New(rand.NewSource(6))
	db := unitRows(rng, 60502, 128)
	ctx := context.Background()
	for _, k := range []int{1000, 9} {
		for _, s := range []Searcher{Exact{}, Faiss{}} {
			b.Run(fmt.Sprintf("k=%d/%s", k, s.Name()), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := s.Search(ctx, db, db, k, Options{Metric: IP, Exclude: ExcludeSelf}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(db.Rows)*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			})
		}
	}
}
