package gpu

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

// sameNeighbors fails unless got equals want bit for bit (ids, distances,
// watch ranks).
func sameNeighbors(t *testing.T, label string, got, want *knn.Neighbors) {
	t.Helper()
	if !slices.Equal(got.IDs, want.IDs) {
		for i := range got.IDs {
			if got.IDs[i] != want.IDs[i] {
				q := i / got.K
				t.Fatalf("%s: query %d: ids %v, exact backend %v (dist %v vs %v)", label, q,
					got.IDsOf(q), want.IDsOf(q), got.DistOf(q), want.DistOf(q))
			}
		}
	}
	for i := range got.Dist {
		if math.Float32bits(got.Dist[i]) != math.Float32bits(want.Dist[i]) {
			t.Fatalf("%s: distance %d: %v (%#x), exact backend %v (%#x)", label, i,
				got.Dist[i], math.Float32bits(got.Dist[i]), want.Dist[i], math.Float32bits(want.Dist[i]))
		}
	}
	if len(got.Ranks) != len(want.Ranks) {
		t.Fatalf("%s: ranks for %d queries, want %d", label, len(got.Ranks), len(want.Ranks))
	}
	for i := range got.Ranks {
		if !slices.Equal(got.Ranks[i], want.Ranks[i]) {
			t.Fatalf("%s: query %d: watch ranks %v, exact backend %v", label, i, got.Ranks[i], want.Ranks[i])
		}
	}
}

// watchFor watches, for each query, up to 12 rows of its own "class"
// (row index mod classes), as the retrieval metrics do for positives.
func watchFor(n, m, classes, maxRank int, excl bool) *knn.Watch {
	w := &knn.Watch{IDs: make([][]int32, m), MaxRank: maxRank}
	for i := 0; i < m; i++ {
		w.IDs[i] = []int32{}
		for j := i % classes; j < n && len(w.IDs[i]) < 12; j += classes {
			if excl && j == i {
				continue
			}
			w.IDs[i] = append(w.IDs[i], int32(j))
		}
	}
	return w
}

// TestEmulationMatchesExact runs the GPU algorithm (CPU emulation of the
// kernels, same plan) against knn.Exact: identical ids, distances and watch
// ranks on random, tie-heavy and duplicate data, for L2 and IP, with and
// without self-exclusion, for k from 1 to beyond the database size, with
// small candidate buffers (forcing the overflow re-run), and with rows
// offered in reverse order within tiles (the GPU's atomics give any order).
func TestEmulationMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	ctx := context.Background()
	for _, kind := range []string{"gauss", "grid", "dups"} {
		for _, shape := range []struct{ n, d int }{{1, 3}, {2, 1}, {97, 5}, {611, 19}} {
			x := randMatrix(rng, shape.n, shape.d, kind)
			for _, metric := range []knn.Metric{knn.L2, knn.IP} {
				for _, excl := range []knn.Exclusion{knn.ExcludeNone, knn.ExcludeSelf} {
					for _, k := range []int{1, 7, 40, shape.n + 3} {
						for variant, s := range []Searcher{
							{emulate: true},
							{emulate: true, Capacity: 1, reverse: true},
						} {
							opt := knn.Options{Metric: metric, Exclude: excl}
							if shape.n > 1 {
								opt.Watch = watchFor(shape.n, shape.n, 7, 25, excl == knn.ExcludeSelf)
							}
							label := fmt.Sprintf("%s %d×%d %v excl=%v k=%d variant %d", kind, shape.n, shape.d, metric, excl, k, variant)
							want, err := knn.Exact{}.Search(ctx, x, x, k, opt)
							if err != nil {
								t.Fatal(err)
							}
							got, err := s.Search(ctx, x, x, k, opt)
							if err != nil {
								t.Fatalf("%s: %v", label, err)
							}
							sameNeighbors(t, label, got, want)
						}
					}
				}
			}
		}
	}
}

// TestEmulationQueryGallery: queries distinct from the database, more
// query blocks than one (a small state budget), several tiles.
func TestEmulationQueryGallery(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, kind := range []string{"gauss", "grid"} {
		q := randMatrix(rng, 150, 9, kind)
		db := randMatrix(rng, 2900, 9, kind)
		opt := knn.Options{Watch: watchFor(db.Rows, q.Rows, 11, 300, false)}
		want, err := knn.Exact{}.Search(context.Background(), q, db, 30, opt)
		if err != nil {
			t.Fatal(err)
		}
		s := Searcher{emulate: true, StateBytes: 1} // one 64-query block at a time
		var calls []int
		opt.Progress = func(done, total int) { calls = append(calls, done) }
		got, err := s.Search(context.Background(), q, db, 30, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(calls, []int{64, 128, 150}) {
			t.Fatalf("progress %v, want one call per query block", calls)
		}
		sameNeighbors(t, kind, got, want)
	}
}

// countingEngine counts the re-runs of an engine.
type countingEngine struct {
	engine
	reruns int
}

func (c *countingEngine) dist(x0, xn int, rerun bool) error {
	if rerun {
		c.reruns++
	}
	return c.engine.dist(x0, xn, rerun)
}

// TestOverflowRerun: a database ordered from far to near makes every tile
// beat the current k-th key for all its rows, so the candidate buffers
// overflow; the re-runs must still give exactly the k nearest.
func TestOverflowRerun(t *testing.T) {
	n, k := 5000, 20
	x := mat32.Matrix{Rows: n, Cols: 1, Data: make([]float32, n)}
	for i := range x.Data {
		x.Data[i] = float32(n - i) // query 0 at 0: row i at distance (n−i)²
	}
	q := mat32.Matrix{Rows: 1, Cols: 1, Data: []float32{0}}
	pl, err := newPlan(1, n, k, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pl.capacity != 2*k || len(pl.tiles) < 3 {
		t.Fatalf("plan %+v: want capacity 2k and several tiles", pl)
	}
	eng := &countingEngine{engine: &emulator{}}
	out := &knn.Neighbors{N: 1, K: k, IDs: make([]int32, k), Dist: make([]float32, k)}
	if err := run(context.Background(), eng, pl, q, x, knn.Options{}, out); err != nil {
		t.Fatal(err)
	}
	if eng.reruns == 0 {
		t.Fatal("no overflow re-run happened: the test no longer exercises it")
	}
	for j, id := range out.IDs {
		if want := int32(n - 1 - j); id != want {
			t.Fatalf("neighbour %d = row %d, want %d (ids %v)", j, id, want, out.IDs)
		}
	}
}

// TestPlanBound: the plan's tiles cover the database once, the first tile
// fits the buffers, and the per-block state respects the budget.
func TestPlanBound(t *testing.T) {
	for _, c := range []struct{ m, n, k int }{{60502, 60502, 1000}, {10000, 1000000, 100}, {5, 3, 9}, {70000, 70000, 40000}} {
		pl, err := newPlan(c.m, c.n, c.k, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, tl := range pl.tiles {
			sum += tl
		}
		if sum != c.n || pl.tiles[0] > pl.capacity || pl.capacity < 2*c.k {
			t.Fatalf("%+v: plan %+v", c, pl)
		}
		if pl.stateBytes() > defaultState && pl.qb > blockAlign {
			t.Fatalf("%+v: state %d bytes exceeds the budget", c, pl.stateBytes())
		}
		if pl.scratch != (8*pl.sortLen > smemSort) {
			t.Fatalf("%+v: scratch flag wrong", c)
		}
	}
	if _, err := newPlan(1, 1, maxK+1, 0, 0); err == nil {
		t.Fatal("k beyond the limit accepted")
	}
}

// TestNoDevice: without a GPU the backend reports why, in one line, and
// Search fails with that reason instead of computing anything.
func TestNoDevice(t *testing.T) {
	ok, info := Available()
	if ok {
		t.Skipf("a CUDA device is present (%s); device_test.go covers it", info)
	}
	if !strings.HasPrefix(info, "no CUDA device: ") || strings.Contains(info, "\n") {
		t.Fatalf("reason %q: want one line starting with \"no CUDA device: \"", info)
	}
	x := mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{0, 1}}
	_, err := Searcher{}.Search(context.Background(), x, x, 1, knn.Options{})
	if err == nil || !errors.Is(err, errNoDevice) && !strings.Contains(err.Error(), "no CUDA device") {
		t.Fatalf("Search without a device: %v", err)
	}
	t.Logf("no CUDA device here: %s", info)
}

// TestBadInput: validation errors come before any device access.
func TestBadInput(t *testing.T) {
	x := mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{0, 1}}
	if _, err := (Searcher{}).Search(context.Background(), x, x, 0, knn.Options{}); !errors.Is(err, knn.ErrBadInput) {
		t.Fatalf("k = 0: %v", err)
	}
}
