package metrics

import (
	"context"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// The chunked search (neighbour lists bounded by Options.neighbourBudget) gives
// bit-identical values to one search holding every list: strict, pml and
// roth, leave-one-out (self-exclusion emulated) and query/gallery, with
// exact distance ties, duplicate rows, few huge classes and singletons,
// and mAP@1000 from watched ranks or from the lists.
func TestChunkedSearchBitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(9))
	for _, tc := range []struct{ n, classes, budget int }{{300, 2, 3000}, {2100, 60, 15000}} {
		d := 3
		x := make([]float32, tc.n*d)
		for i := range x {
			x[i] = float32(rng.Intn(5)) // many exact ties and duplicate rows
		}
		labels := make([]int32, tc.n)
		for i := range labels {
			labels[i] = int32(rng.Intn(tc.classes))
		}
		labels[0] = int32(tc.classes) // a singleton class
		emb := mat32.Matrix{Rows: tc.n, Cols: d, Data: x}
		half := tc.n / 2
		q := mat32.Matrix{Rows: half, Cols: d, Data: x[:half*d]}
		g := mat32.Matrix{Rows: tc.n - half, Cols: d, Data: x[half*d:]}
		inputs := map[string]Input{
			"loo": {Emb: emb, Labels: labels},
			"qg":  {Emb: q, Labels: labels[:half], Gallery: &g, GalleryLabels: labels[half:]},
		}
		for name, in := range inputs {
			for _, conv := range []Convention{Strict, PML, Roth} {
				for _, searcher := range []knn.Searcher{knn.Exact{}, noWatch{}} {
					if tc.n > 300 && !knn.Watches(searcher) {
						continue // the depth-1000 lists: small case only, for time
					}
					opt := Options{Metrics: []string{"R@k", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}, Ks: []int{1, 4}, Convention: conv, Backend: Backend{Searcher: searcher}}
					whole := eval(t, in, opt)
					opt.neighbourBudget = tc.budget // 10–20 chunks, across the 2048-query blocks
					chunked := eval(t, in, opt)
					for k, v := range whole.Metrics {
						if chunked.Metrics[k] != v {
							t.Errorf("n=%d classes=%d %s %s watch=%v: %s %v chunked, %v whole",
								tc.n, tc.classes, name, conv, knn.Watches(searcher), k, chunked.Metrics[k], v)
						}
					}
					if len(whole.Metrics) != len(chunked.Metrics) || whole.LoneQueries != chunked.LoneQueries {
						t.Errorf("%s %s: metrics %d vs %d, lone %d vs %d", name, conv, len(whole.Metrics), len(chunked.Metrics), whole.LoneQueries, chunked.LoneQueries)
					}
				}
			}
		}
	}
}

func TestDropSelf(t *testing.T) {
	// queries 5 and 6 of the database; query 5 finds itself second, query
	// 6 not at all (duplicates ahead of it)
	nb := &knn.Neighbors{N: 2, K: 3, IDs: []int32{2, 5, 9, 1, 3, 4}, Dist: []float32{0, 0, 1, 0, 0, 0}}
	dropSelf(nb, 5)
	if nb.K != 2 || len(nb.IDs) != 4 || nb.IDs[0] != 2 || nb.IDs[1] != 9 || nb.IDs[2] != 1 || nb.IDs[3] != 3 || nb.Dist[1] != 1 {
		t.Fatalf("%+v", nb)
	}
}

// countingSearcher records the largest neighbour-list block one Search
// call returns.
type countingSearcher struct {
	knn.Exact
	most *int
}

func (c countingSearcher) Search(ctx context.Context, q, db mat32.Matrix, k int, opt knn.Options) (*knn.Neighbors, error) {
	*c.most = max(*c.most, q.Rows*k)
	return c.Exact.Search(ctx, q, db, k, opt)
}

// Few huge classes no longer make the lists N × (largest class): every
// search call stays within the budget's entries.
func TestMAPRListsBounded(t *testing.T) {
	t.Parallel()
	const budget = 20000
	n := 1000
	x := make([]float32, n*2)
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % 2)
		x[2*i], x[2*i+1] = float32(i%7), float32(i%2)
	}
	most := 0
	in := Input{Emb: mat32.Matrix{Rows: n, Cols: 2, Data: x}, Labels: labels}
	eval(t, in, Options{Metrics: []string{"MAP@R"}, Backend: Backend{Searcher: countingSearcher{most: &most}}, neighbourBudget: budget})
	if most == 0 || most > budget {
		t.Fatalf("largest search block %d entries, budget %d (depth ~%d × %d queries unchunked)", most, budget, n/2, n)
	}
}
