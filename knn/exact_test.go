package knn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

func randMatrix(rng *rand.Rand, n, d int, kind string) mat32.Matrix {
	data := make([]float32, n*d)
	switch kind {
	case "gauss":
		for i := range data {
			data[i] = float32(rng.NormFloat64())
		}
	case "grid": // small integers: every distance is exact in float32, many ties
		for i := range data {
			data[i] = float32(rng.Intn(5) - 2)
		}
	case "dups": // few distinct rows, many exact duplicates
		distinct := max(1, n/5)
		base := make([]float32, distinct*d)
		for i := range base {
			base[i] = float32(rng.Intn(3) - 1)
		}
		for i := 0; i < n; i++ {
			r := rng.Intn(distinct)
			copy(data[i*d:(i+1)*d], base[r*d:(r+1)*d])
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}
}

func cloneMatrix(m mat32.Matrix) mat32.Matrix {
	return mat32.Matrix{Rows: m.Rows, Cols: m.Cols, Data: slices.Clone(m.Data)}
}

// exactDist is the float64 reference distance in output convention.
func exactDist(q, x []float32, metric Metric) float64 {
	var s float64
	for t := range q {
		if metric == L2 {
			d := float64(q[t]) - float64(x[t])
			s += d * d
		} else {
			s += float64(q[t]) * float64(x[t])
		}
	}
	return s
}

// checkParity compares got with BruteForce's want. exact demands identical
// ids and distances (integer data); otherwise ids may differ only between
// neighbours whose distances agree within atol, which is checked by
// re-computing the distance of every returned id in float64.
func checkParity(t *testing.T, label string, q, db mat32.Matrix, got, want *Neighbors, metric Metric, excl Exclusion, exact bool) {
	t.Helper()
	if got.N != want.N || got.K != want.K || len(got.IDs) != len(want.IDs) || len(got.Dist) != len(want.Dist) {
		t.Fatalf("%s: shape %d×%d, want %d×%d", label, got.N, got.K, want.N, want.K)
	}
	var scale float64 = 1
	for _, v := range db.Data {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	atol := 4e-6 * scale * scale * float64(max(db.Cols, 1))
	for i := 0; i < got.N; i++ {
		gi, wi := got.IDsOf(i), want.IDsOf(i)
		gd, wd := got.DistOf(i), want.DistOf(i)
		seen := map[int32]bool{}
		for s := range gi {
			if exact {
				if gi[s] != wi[s] || gd[s] != wd[s] {
					t.Fatalf("%s: query %d slot %d: got (%d, %g), want (%d, %g)\n got %v\nwant %v", label, i, s, gi[s], gd[s], wi[s], wd[s], gi, wi)
				}
				continue
			}
			if (gi[s] == -1) != (wi[s] == -1) {
				t.Fatalf("%s: query %d slot %d: got id %d, want %d", label, i, s, gi[s], wi[s])
			}
			if gi[s] == -1 {
				pad := math.Inf(1)
				if metric == IP {
					pad = math.Inf(-1)
				}
				if float64(gd[s]) != pad {
					t.Fatalf("%s: query %d slot %d: pad distance %g", label, i, s, gd[s])
				}
				continue
			}
			if seen[gi[s]] {
				t.Fatalf("%s: query %d: duplicate id %d", label, i, gi[s])
			}
			seen[gi[s]] = true
			if excl == ExcludeSelf && int(gi[s]) == i {
				t.Fatalf("%s: query %d returned itself", label, i)
			}
			ref := exactDist(q.Row(i), db.Row(int(gi[s])), metric)
			if math.Abs(ref-float64(wd[s])) > atol || math.Abs(float64(gd[s])-float64(wd[s])) > atol {
				t.Fatalf("%s: query %d slot %d: id %d dist %g (true %g), want id %d dist %g (atol %g)", label, i, s, gi[s], gd[s], ref, wi[s], wd[s], atol)
			}
			if metric == L2 && gd[s] < 0 {
				t.Fatalf("%s: negative L2 distance %g", label, gd[s])
			}
			// Where the reference distance is isolated, the id must match.
			isolated := true
			for _, u := range []int{s - 1, s + 1} {
				if u >= 0 && u < len(wd) && wi[u] != -1 && math.Abs(float64(wd[u])-float64(wd[s])) <= 2*atol {
					isolated = false
				}
			}
			if isolated && gi[s] != wi[s] {
				t.Fatalf("%s: query %d slot %d: id %d, want %d (dist %g vs %g)", label, i, s, gi[s], wi[s], gd[s], wd[s])
			}
		}
	}
}

func equalNeighbors(a, b *Neighbors) bool {
	return a.N == b.N && a.K == b.K && slices.Equal(a.IDs, b.IDs) && slices.Equal(a.Dist, b.Dist)
}

func TestExactParity(t *testing.T) {
	ctx := context.Background()
	type shape struct{ n, m, d int }
	shapes := []shape{{1, 1, 1}, {4, 4, 0}, {5, 7, 3}, {13, 13, 1}, {50, 50, 17}, {97, 97, 128}, {61, 130, 129}, {300, 300, 17}}
	if testing.Short() {
		shapes = shapes[:6]
	}
	for _, kind := range []string{"gauss", "grid", "dups"} {
		for si, sh := range shapes {
			rng := rand.New(rand.NewSource(int64(100*si + len(kind))))
			db := randMatrix(rng, sh.m, sh.d, kind)
			queries := map[string]mat32.Matrix{"self": db}
			if sh.n == sh.m {
				queries["copy"] = cloneMatrix(db) // same rows, different array: general path
			}
			if sh.n != sh.m || sh.n < 20 {
				queries["other"] = randMatrix(rng, sh.n, sh.d, kind)
			}
			for qname, q := range queries {
				for _, metric := range []Metric{L2, IP} {
					for _, excl := range []Exclusion{ExcludeNone, ExcludeSelf} {
						if excl == ExcludeSelf && q.Rows != db.Rows {
							continue
						}
						for _, k := range []int{1, 9, max(1, sh.m-1), sh.m + 3} {
							opt := Options{Metric: metric, Exclude: excl}
							want, err := BruteForce{}.Search(ctx, q, db, k, opt)
							if err != nil {
								t.Fatal(err)
							}
							refs := make([]*Neighbors, len(kernels)) // per kernel
							type run struct{ ki, tileQ, threads int }
							runs := []run{{0, 0, 1}, {0, 0, 2}, {0, 48, 1}, {0, 48, 2}}
							for ki := 1; ki < len(kernels); ki++ {
								runs = append(runs, run{ki, 0, 1}, run{ki, 48, 2})
							}
							for _, rn := range runs {
								e := Exact{TileQ: rn.tileQ, kernel: &kernels[rn.ki]}
								opt.Threads = rn.threads
								label := fmt.Sprintf("%s %v q=%s %v excl=%v k=%d kernel=%s tile=%d threads=%d", kind, sh, qname, metric, excl, k, kernels[rn.ki].name, rn.tileQ, rn.threads)
								got, err := e.Search(ctx, q, db, k, opt)
								if err != nil {
									t.Fatalf("%s: %v", label, err)
								}
								checkParity(t, label, q, db, got, want, metric, excl, kind != "gauss")
								if refs[rn.ki] == nil {
									refs[rn.ki] = got
								} else if !equalNeighbors(refs[rn.ki], got) {
									t.Fatalf("%s: output differs from tile=0 threads=1", label)
								}
							}
							// The symmetric and general paths agree bit for bit,
							// kernel by kernel (kernels differ in FMA use, so
							// each is compared with its own symmetric result,
							// whatever DMLBENCH_KERNEL makes the default).
							if qname == "self" {
								for ki := range kernels {
									e := Exact{TileQ: 48, NoSymmetry: true, kernel: &kernels[ki]}
									got, err := e.Search(ctx, q, db, k, opt)
									if err != nil {
										t.Fatal(err)
									}
									if !equalNeighbors(refs[ki], got) {
										t.Fatalf("%s %v %v excl=%v k=%d kernel=%s: symmetric and general paths differ", kind, sh, metric, excl, k, kernels[ki].name)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestExactHand checks 4 points on a line, x = 0, 1, 3, 7, by hand.
func TestExactHand(t *testing.T) {
	x := mat32.Matrix{Rows: 4, Cols: 1, Data: []float32{0, 1, 3, 7}}
	ctx := context.Background()
	for _, e := range []Exact{{}, {NoSymmetry: true}} {
		got, err := e.Search(ctx, x, x, 2, Options{Metric: L2, Exclude: ExcludeSelf})
		if err != nil {
			t.Fatal(err)
		}
		wantIDs := []int32{1, 2, 0, 2, 1, 0, 2, 1}
		wantD := []float32{1, 9, 1, 4, 4, 9, 16, 36}
		if !slices.Equal(got.IDs, wantIDs) || !slices.Equal(got.Dist, wantD) {
			t.Fatalf("L2: got %v %v, want %v %v", got.IDs, got.Dist, wantIDs, wantD)
		}
		// IP, no exclusion, k = 5 > 4 rows: one −1 slot with −Inf.
		got, err = e.Search(ctx, x, x, 5, Options{Metric: IP})
		if err != nil {
			t.Fatal(err)
		}
		// Query 1 (value 1): products 0, 1, 3, 7 → ids 3, 2, 1, 0.
		if ids, d := got.IDsOf(1), got.DistOf(1); !slices.Equal(ids, []int32{3, 2, 1, 0, -1}) ||
			!slices.Equal(d[:4], []float32{7, 3, 1, 0}) || !math.IsInf(float64(d[4]), -1) {
			t.Fatalf("IP query 1: %v %v", ids, d)
		}
		// Query 0 (value 0): all products 0, a four-way tie → index order.
		if ids := got.IDsOf(0); !slices.Equal(ids, []int32{0, 1, 2, 3, -1}) {
			t.Fatalf("IP query 0 tie order: %v", ids)
		}
	}
	// Ties: points 0, 2, 4; the middle one is at distance 4 from both ends.
	y := mat32.Matrix{Rows: 3, Cols: 1, Data: []float32{0, 2, 4}}
	got, err := Exact{}.Search(ctx, y, y, 2, Options{Exclude: ExcludeSelf})
	if err != nil {
		t.Fatal(err)
	}
	if ids := got.IDsOf(1); !slices.Equal(ids, []int32{0, 2}) {
		t.Fatalf("tie order: %v", ids)
	}
	// One-row database with self-exclusion: nothing to return.
	one := mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{1, 2}}
	got, err = Exact{}.Search(ctx, one, one, 3, Options{Exclude: ExcludeSelf})
	if err != nil || !slices.Equal(got.IDs, []int32{-1, -1, -1}) || !math.IsInf(float64(got.Dist[0]), 1) {
		t.Fatalf("single row: %v %v", got, err)
	}
}

func TestExactDuplicateRowsByIndex(t *testing.T) {
	// Rows 0 and 2 are identical; self-exclusion is by index, so query 0
	// returns row 2 at distance 0 first, and vice versa.
	x := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{1, 1, 5, 5, 1, 1}}
	got, err := Exact{}.Search(context.Background(), x, x, 2, Options{Exclude: ExcludeSelf})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.IDs, []int32{2, 1, 0, 2, 0, 1}) || got.Dist[0] != 0 || got.Dist[4] != 0 {
		t.Fatalf("got %v %v", got.IDs, got.Dist)
	}
}

func TestExactBadInput(t *testing.T) {
	ctx := context.Background()
	a := mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{1, 2, 3, 4}}
	b := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{1, 2, 3, 4, 5, 6}}
	c := mat32.Matrix{Rows: 2, Cols: 3, Data: make([]float32, 6)}
	cases := map[string]struct {
		q, db mat32.Matrix
		k     int
		opt   Options
	}{
		"dim":       {a, c, 1, Options{}},
		"k0":        {a, a, 0, Options{}},
		"kneg":      {a, a, -3, Options{}},
		"emptydb":   {a, mat32.Matrix{Cols: 2}, 1, Options{}},
		"selfsize":  {a, b, 1, Options{Exclude: ExcludeSelf}},
		"metric":    {a, a, 1, Options{Metric: Metric(7)}},
		"shortdata": {mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{1}}, a, 1, Options{}},
	}
	for name, tc := range cases {
		_, err := Exact{}.Search(ctx, tc.q, tc.db, tc.k, tc.opt)
		if !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: err = %v, want ErrBadInput", name, err)
		}
	}
	// Empty query set is fine.
	got, err := Exact{}.Search(ctx, mat32.Matrix{Cols: 2}, a, 2, Options{})
	if err != nil || got.N != 0 {
		t.Fatalf("empty queries: %v %v", got, err)
	}
}

func TestExactCancelAndProgress(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	x := randMatrix(rng, 500, 8, "gauss")
	for _, e := range []Exact{{TileQ: 48}, {TileQ: 48, NoSymmetry: true}} {
		// Progress is monotone and ends at the total.
		last, calls := 0, 0
		opt := Options{Exclude: ExcludeSelf, Threads: 2, Progress: func(done, total int) {
			if done < last || total != 500 {
				t.Errorf("progress %d/%d after %d", done, total, last)
			}
			last = done
			calls++
		}}
		if _, err := e.Search(context.Background(), x, x, 5, opt); err != nil {
			t.Fatal(err)
		}
		if last != 500 || calls < 2 {
			t.Fatalf("progress ended at %d after %d calls", last, calls)
		}
		// Already cancelled.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := e.Search(ctx, x, x, 5, Options{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("pre-cancelled: %v", err)
		}
		// Cancelled from the first progress report.
		ctx, cancel = context.WithCancel(context.Background())
		opt = Options{Threads: 1, Progress: func(int, int) { cancel() }}
		if _, err := e.Search(ctx, x, x, 5, opt); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel mid-search (sym=%v): %v", !e.NoSymmetry, err)
		}
		cancel()
	}
}

func TestSymmetricBudgetFallback(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	x := randMatrix(rng, 200, 5, "gauss")
	ctx := context.Background()
	a, err := Exact{TileQ: 48}.Search(ctx, x, x, 50, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A budget too small for the symmetric buffers selects the general path;
	// a tight one shrinks the buffers. Output is identical either way.
	for _, budget := range []int64{1, 200 * 8 * 70} {
		b, err := Exact{TileQ: 48, MaxStateBytes: budget}.Search(ctx, x, x, 50, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !equalNeighbors(a, b) {
			t.Fatalf("budget %d changed the output", budget)
		}
	}
}

// selectTestKeys returns n distinct keys in one of the orders the selection
// tests use: "rand", "sorted", "reversed", or "fewdist" (three high parts,
// so the radix passes meet long runs of equal top bits).
func selectTestKeys(rng *rand.Rand, n int, pattern string) []uint64 {
	a := make([]uint64, n)
	for i := range a {
		switch pattern {
		case "rand":
			a[i] = rng.Uint64()
		case "sorted":
			a[i] = uint64(i)
		case "reversed":
			a[i] = uint64(n - i)
		case "fewdist":
			a[i] = uint64(rng.Intn(3))<<32 | uint64(i)
		}
	}
	return a
}

func TestRadixSelectSortAndKeys(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int{1, 2, 25, 26, 100, 1000, 5000} {
		for _, pattern := range []string{"rand", "sorted", "reversed", "fewdist"} {
			a := selectTestKeys(rng, n, pattern)
			s := slices.Clone(a)
			slices.Sort(s)
			for _, k := range []int{1, (n + 1) / 2, n} {
				b := slices.Clone(a)
				scratch := make([]uint64, n)
				if kth := radixSelect(b, k, scratch); kth != s[k-1] || b[k-1] != s[k-1] {
					t.Fatalf("n=%d %s k=%d: k-th = %d (a[k-1] = %d), want %d", n, pattern, k, kth, b[k-1], s[k-1])
				}
				c0 := slices.Clone(a)
				if kth := radixKth(c0, k, scratch); kth != s[k-1] || !slices.Equal(c0, a) {
					t.Fatalf("n=%d %s k=%d: radixKth = %d, want %d (input unchanged: %v)", n, pattern, k, kth, s[k-1], slices.Equal(c0, a))
				}
				top := slices.Clone(b[:k])
				slices.Sort(top)
				if !slices.Equal(top, s[:k]) {
					t.Fatalf("n=%d %s k=%d: wrong set", n, pattern, k)
				}
				c := slices.Clone(a)
				radixSort(c, scratch)
				if !slices.Equal(c, s) {
					t.Fatalf("n=%d %s: radixSort wrong", n, pattern)
				}
			}
		}
	}
}
