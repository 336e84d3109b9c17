package knn

import (
	"context"
	"math/rand"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// ranksFromFull ranks the watched rows by a full-depth search of the same
// searcher (same arithmetic), the definition Watch must reproduce.
func ranksFromFull(t *testing.T, e Exact, q, db mat32.Matrix, w *Watch, opt Options) [][]int32 {
	t.Helper()
	depth := db.Rows
	if opt.Exclude == ExcludeSelf {
		depth--
	}
	opt.Watch = nil
	nb, err := e.Search(context.Background(), q, db, depth, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]int32, q.Rows)
	for i := range out {
		out[i] = []int32{}
		for r, id := range nb.IDsOf(i) {
			if r+1 > w.MaxRank {
				break
			}
			if slices.Contains(w.IDs[i], id) {
				out[i] = append(out[i], int32(r+1))
			}
		}
	}
	return out
}

// TestWatchRanks: the ranks of watched rows equal their positions in the
// full ranking, on random, duplicate-heavy (ties) and clustered data, on
// the general and the symmetric path, for L2 and IP, with MaxRank below,
// at and above the number of candidates, for classes of about 6 rows and
// for 3 large classes (whose watch states search through a table).
func TestWatchRanks(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, kind := range []string{"gauss", "grid", "dups"} {
		for _, n := range []int{1, 2, 7, 130, 517, -517} {
			classes := max(1, n/6)
			if n < 0 {
				n, classes = -n, 3
			}
			x := randMatrix(rng, n, 9, kind)
			labels := make([]int32, n)
			for i := range labels {
				labels[i] = int32(rng.Intn(classes))
			}
			for _, metric := range []Metric{L2, IP} {
				for _, maxRank := range []int{1, 5, 40, n + 3} {
					w := &Watch{MaxRank: maxRank, IDs: make([][]int32, n)}
					for i := range w.IDs {
						for j := range labels {
							if j != i && labels[j] == labels[i] {
								w.IDs[i] = append(w.IDs[i], int32(j))
							}
						}
					}
					opt := Options{Metric: metric, Exclude: ExcludeSelf, Watch: w}
					short := specParams{sample: 1024, stage1: 256, factor: 1, sigmas: 4, pend: 5}
					for _, e := range []Exact{{NoSymmetry: true, TileQ: 48}, {TileQ: 48}, {TileQ: 48, spec: &short}} {
						k := min(3, max(n-1, 1))
						nb, err := e.Search(context.Background(), x, x, k, opt)
						if err != nil {
							t.Fatal(err)
						}
						if n == 1 {
							continue
						}
						want := ranksFromFull(t, e, x, x, w, opt)
						for i := range want {
							if !slices.Equal(nb.Ranks[i], want[i]) {
								t.Fatalf("%s n=%d %v maxRank=%d sym=%v query %d: ranks %v, full search %v",
									kind, n, metric, maxRank, !e.NoSymmetry, i, nb.Ranks[i], want[i])
							}
						}
						// the neighbour lists are those of a search without Watch
						plain := opt
						plain.Watch = nil
						nb0, _ := e.Search(context.Background(), x, x, k, plain)
						if !slices.Equal(nb.IDs, nb0.IDs) || !slices.Equal(nb.Dist, nb0.Dist) {
							t.Fatalf("%s n=%d: Watch changed the neighbour lists", kind, n)
						}
					}
				}
			}
		}
	}
}

// TestWatchQueryGallery: separate query and database sets.
func TestWatchQueryGallery(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	q := randMatrix(rng, 50, 16, "grid")
	db := randMatrix(rng, 300, 16, "grid")
	w := &Watch{MaxRank: 100, IDs: make([][]int32, q.Rows)}
	for i := range w.IDs {
		for j := 0; j < db.Rows; j++ {
			if (i+j)%7 == 0 {
				w.IDs[i] = append(w.IDs[i], int32(j))
			}
		}
	}
	opt := Options{Metric: L2, Watch: w}
	nb, err := Exact{}.Search(context.Background(), q, db, 4, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := ranksFromFull(t, Exact{}, q, db, w, opt)
	for i := range want {
		if !slices.Equal(nb.Ranks[i], want[i]) {
			t.Fatalf("query %d: ranks %v, full search %v", i, nb.Ranks[i], want[i])
		}
	}
}

func TestWatchBadInput(t *testing.T) {
	x := mat32.Matrix{Rows: 3, Cols: 1, Data: []float32{1, 2, 3}}
	for _, w := range []*Watch{
		{MaxRank: 1, IDs: [][]int32{{1}, {0}}},         // wrong length
		{MaxRank: 0, IDs: [][]int32{{1}, {0}, {0}}},    // MaxRank 0
		{MaxRank: 2, IDs: [][]int32{{0}, {0}, {0}}},    // self
		{MaxRank: 2, IDs: [][]int32{{1, 1}, {0}, {0}}}, // duplicate
		{MaxRank: 2, IDs: [][]int32{{3}, {0}, {0}}},    // out of range
	} {
		if _, err := (Exact{}).Search(context.Background(), x, x, 1, Options{Exclude: ExcludeSelf, Watch: w}); err == nil {
			t.Errorf("watch %+v accepted", w)
		}
	}
}

// TestWatchSpeculativeCap: large classes (watched rows far beyond MaxRank)
// take the speculative-cap path; the ranks equal the full ranking whether
// the cap is proven during the scan (default parameters) or not (a cap
// aimed below MaxRank, so that queries are ranked again by exactRanks), on
// both paths, for L2 and IP, with 1 and 2 threads.
func TestWatchSpeculativeCap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(12))
	n, maxRank := 1500, 40
	x := randMatrix(rng, n, 12, "gauss")
	w := &Watch{MaxRank: maxRank, IDs: make([][]int32, n)}
	for i := range w.IDs {
		for j := i % 5; j < n; j += 5 { // 5 classes of 300 rows
			if j != i {
				w.IDs[i] = append(w.IDs[i], int32(j))
			}
		}
	}
	for _, tc := range []struct {
		name           string
		sample         int
		factor, sigmas float64
		recount        bool
	}{{"proven", 2048, 1.0, 4, false}, {"recounted", 256, 0.3, 0, true}} {
		spec := defaultSpecParams()
		spec.sample, spec.factor, spec.sigmas = tc.sample, tc.factor, tc.sigmas
		var recounted atomic.Int64
		for _, metric := range []Metric{L2, IP} {
			opt := Options{Metric: metric, Exclude: ExcludeSelf, Watch: w}
			for _, e := range []Exact{{NoSymmetry: true, TileQ: 96}, {TileQ: 96}} {
				e.spec, e.recounts = &spec, &recounted
				var want [][]int32
				for _, threads := range []int{1, 2} {
					opt.Threads = threads
					before := recounted.Load()
					nb, err := e.Search(context.Background(), x, x, 5, opt)
					if err != nil {
						t.Fatal(err)
					}
					recounts := recounted.Load() - before
					if tc.recount != (recounts > 0) {
						t.Fatalf("%s %v sym=%v: %d queries ranked again", tc.name, metric, !e.NoSymmetry, recounts)
					}
					if want == nil {
						want = ranksFromFull(t, e, x, x, w, opt)
					}
					for i := range want {
						if !slices.Equal(nb.Ranks[i], want[i]) {
							t.Fatalf("%s %v sym=%v threads=%d query %d: ranks %v, full search %v",
								tc.name, metric, !e.NoSymmetry, threads, i, nb.Ranks[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestSpecKth checks the speculative cap's selection against a sort, on
// samples whose first stage is representative (the pivot path), holds the
// smallest keys (too few below the pivot: the fallback) or the largest.
func TestSpecKth(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, n := range []int{300, 2048} {
		for _, pattern := range []string{"rand", "sorted", "reversed", "fewdist"} {
			a := selectTestKeys(rng, n, pattern)
			s := slices.Clone(a)
			slices.Sort(s)
			for _, sel := range []int{1, 37, 147, n / 2, n} {
				c := slices.Clone(a)
				scratch := make([]uint64, n)
				if got := specKth(c, 256, sel, scratch); got != s[sel-1] || !slices.Equal(c, a) {
					t.Fatalf("n=%d %s sel=%d: specKth = %d, want %d (input unchanged: %v)", n, pattern, sel, got, s[sel-1], slices.Equal(c, a))
				}
			}
		}
	}
}

// TestKSpecNeighbours: the speculative top-k bound changes no neighbour
// list, whether it holds (default parameters) or is too tight (a bound
// aimed below rank k, so that queries select again in exactList), on both
// paths, for L2 and IP, with and without self-exclusion and a watch.
func TestKSpecNeighbours(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(21))
	n := 2600
	for _, kind := range []string{"gauss", "dups"} {
		x := randMatrix(rng, n, 10, kind)
		w := &Watch{MaxRank: 300, IDs: make([][]int32, n)}
		for i := range w.IDs {
			for j := i % 7; j < n; j += 7 {
				if j != i {
					w.IDs[i] = append(w.IDs[i], int32(j))
				}
			}
		}
		for _, tc := range []struct {
			name    string
			spec    specParams
			recount bool
		}{{"holds", defaultSpecParams(), false}, {"too tight", specParams{sample: 1024, stage1: 256, factor: 0.3, sigmas: 0}, true}} {
			for _, metric := range []Metric{L2, IP} {
				for _, excl := range []Exclusion{ExcludeNone, ExcludeSelf} {
					for _, watch := range []*Watch{nil, w} {
						opt := Options{Metric: metric, Exclude: excl, Watch: watch}
						if watch != nil && excl == ExcludeNone {
							continue // watch lists hold no self only under exclusion
						}
						for _, sym := range []bool{false, true} {
							var recounted atomic.Int64
							spec := tc.spec
							e := Exact{NoSymmetry: !sym, TileQ: 96, spec: &spec, recounts: &recounted}
							ref := Exact{NoSymmetry: !sym, TileQ: 96, NoKSpec: true, spec: &spec}
							const k = 40
							got, err := e.Search(context.Background(), x, x, k, opt)
							if err != nil {
								t.Fatal(err)
							}
							want, _ := ref.Search(context.Background(), x, x, k, opt)
							if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Dist, want.Dist) {
								t.Fatalf("%s %s %v excl=%v watch=%v sym=%v: neighbours differ", kind, tc.name, metric, excl, watch != nil, sym)
							}
							for i := range want.Ranks {
								if !slices.Equal(got.Ranks[i], want.Ranks[i]) {
									t.Fatalf("%s %s: ranks of query %d differ", kind, tc.name, i)
								}
							}
							if tc.recount && watch == nil && recounted.Load() == 0 {
								t.Fatalf("%s %s %v sym=%v: no query selected again", kind, tc.name, metric, sym)
							}
						}
					}
				}
			}
		}
	}
}

// TestWatchBand: with Watch.Band and Order, the ranks are those of an
// "exact" distance that differs from the kernel's value by a deterministic
// perturbation within ±B/2 (so two rows swap only within B of each
// other), on random, grid and duplicate data, the general and the
// symmetric path, L2 and IP, the speculative cap proven and recounted.
func TestWatchBand(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(13))
	for _, kind := range []string{"gauss", "grid", "dups"} {
		n := 400
		x := randMatrix(rng, n, 6, kind)
		// Every 7th row watched, and every 2nd: bands holding watched
		// rows only are then common.
		for _, cfg := range []struct {
			band float32
			step int
		}{{0, 7}, {1e-3, 7}, {0.05, 7}, {1, 7}, {1e-3, 2}, {0.05, 2}} {
			band, step := cfg.band, cfg.step
			for _, metric := range []Metric{L2, IP} {
				full, err := Exact{}.Search(context.Background(), x, x, n-1, Options{Metric: metric, Exclude: ExcludeSelf})
				if err != nil {
					t.Fatal(err)
				}
				exact := func(i int, j int32) float64 {
					h := uint64(i)*0x9e3779b97f4a7c15 ^ uint64(j)*0xbf58476d1ce4e5b9
					h ^= h >> 31
					h *= 0x94d049bb133111eb
					h ^= h >> 29
					return float64(h>>11)/(1<<53) - 0.5 // in [−1/2, 1/2)
				}
				val := make([]map[int32]float64, n)
				for i := range val {
					val[i] = map[int32]float64{}
					for p, id := range full.IDsOf(i) {
						v := float64(full.DistOf(i)[p])
						if metric == IP {
							v = -v
						}
						val[i][id] = v + float64(band)*exact(i, id)
					}
				}
				cmpExact := func(i int) func(a, b int32) int {
					return func(a, b int32) int {
						if va, vb := val[i][a], val[i][b]; va != vb {
							if va < vb {
								return -1
							}
							return 1
						}
						return int(a - b)
					}
				}
				w := &Watch{MaxRank: 30, IDs: make([][]int32, n),
					Band:  func(int, float32) float32 { return band },
					Order: func(i int, ids []int32) { slices.SortFunc(ids, cmpExact(i)) }}
				want := make([][]int32, n)
				for i := range w.IDs {
					for j := i % step; j < n; j += step {
						if j != i {
							w.IDs[i] = append(w.IDs[i], int32(j))
						}
					}
					order := slices.Clone(full.IDsOf(i))
					slices.SortFunc(order, cmpExact(i))
					want[i] = []int32{}
					for p, id := range order[:w.MaxRank] {
						if slices.Contains(w.IDs[i], id) {
							want[i] = append(want[i], int32(p+1))
						}
					}
				}
				opt := Options{Metric: metric, Exclude: ExcludeSelf, Watch: w}
				// Short watch queues drain while rows drop out of the watch.
				for _, sp := range []specParams{defaultSpecParams(), {sample: 64, stage1: 64, factor: 0.3, sigmas: 0},
					{sample: 1024, stage1: 256, factor: 1, sigmas: 4, pend: 1}, {sample: 64, stage1: 64, factor: 0.3, pend: 7}} {
					for _, e := range []Exact{{NoSymmetry: true, TileQ: 48}, {TileQ: 48}} {
						e.spec = &sp
						nb, err := e.Search(context.Background(), x, x, 3, opt)
						if err != nil {
							t.Fatal(err)
						}
						if !nb.RanksExact {
							t.Fatal("RanksExact not set")
						}
						for i := 0; i < n; i++ {
							if !slices.Equal(nb.Ranks[i], want[i]) {
								t.Fatalf("%s band %g step %d %v sym=%v spec %d query %d: ranks %v, exact %v", kind, band, step, metric, !e.NoSymmetry, sp.sample, i, nb.Ranks[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
