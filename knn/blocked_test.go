package knn

import (
	"context"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Blocked equals one search of the whole database bit for bit: lists,
// distances and watched ranks, L2 and IP, with and without (ranged)
// self-exclusion, blocks and query chunks of odd sizes, exact ties.
func TestBlockedEqualsWhole(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	for _, kind := range []string{"dups", "gauss"} {
		db := randMatrix(rng, 530, 6, kind)
		watch := &Watch{MaxRank: 40, IDs: make([][]int32, db.Rows)}
		for i := range watch.IDs {
			for j := i % 5; j < db.Rows; j += 5 {
				if j != i {
					watch.IDs[i] = append(watch.IDs[i], int32(j))
				}
			}
		}
		for _, metric := range []Metric{L2, IP} {
			for _, excl := range []Exclusion{ExcludeNone, ExcludeSelf} {
				for _, k := range []int{1, 7, 600} {
					opt := Options{Metric: metric, Exclude: excl, Watch: watch}
					want, err := Exact{}.Search(ctx, db, db, k, opt)
					if err != nil {
						t.Fatal(err)
					}
					got, err := Blocked{Searcher: Exact{}, Rows: 97, Entries: 3000}.Search(ctx, db, db, k, opt)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s %v excl=%v k=%d: blocked search differs from the whole", kind, metric, excl, k)
					}
					if excl != ExcludeSelf || k > 7 {
						continue
					}
					lo, hi := 101, 333
					ropt := Options{Metric: metric, Exclude: excl, SelfRange: true, SelfOffset: lo, Watch: &Watch{MaxRank: 40, IDs: watch.IDs[lo:hi]}}
					part, err := Blocked{Searcher: Exact{}, Rows: 64}.Search(ctx, mat32.Matrix{Rows: hi - lo, Cols: db.Cols, Data: db.Data[lo*db.Cols : hi*db.Cols]}, db, k, ropt)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(part.IDs, want.IDs[lo*k:hi*k]) || !reflect.DeepEqual(part.Dist, want.Dist[lo*k:hi*k]) || !reflect.DeepEqual(part.Ranks, want.Ranks[lo:hi]) {
						t.Fatalf("%s %v k=%d: blocked rows %d…%d differ", kind, metric, k, lo, hi)
					}
				}
			}
		}
	}
}
