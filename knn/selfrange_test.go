package knn

import (
	"context"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// A search of database rows lo … hi−1 with SelfRange (offset lo) returns
// exactly rows lo … hi−1 of the self-excluding search of the whole
// database: lists, distances and watched ranks.
func TestSelfRangeIsARangeOfTheWholeSearch(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(3))
	db := randMatrix(rng, 700, 5, "dups")
	watch := &Watch{MaxRank: 60, IDs: make([][]int32, db.Rows)}
	for i := range watch.IDs {
		for j := i % 7; j < db.Rows; j += 7 {
			if j != i {
				watch.IDs[i] = append(watch.IDs[i], int32(j))
			}
		}
	}
	for _, s := range []Searcher{Exact{}, BruteForce{}} {
		for _, metric := range []Metric{L2, IP} {
			opt := Options{Metric: metric, Exclude: ExcludeSelf}
			if s.Name() == ExactName {
				opt.Watch = watch
			}
			whole, err := s.Search(ctx, db, db, 9, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range [][2]int{{0, 100}, {123, 457}, {650, 700}} {
				lo, hi := r[0], r[1]
				q := mat32.Matrix{Rows: hi - lo, Cols: db.Cols, Data: db.Data[lo*db.Cols : hi*db.Cols]}
				ropt := opt
				ropt.SelfRange, ropt.SelfOffset = true, lo
				if opt.Watch != nil {
					ropt.Watch = &Watch{MaxRank: watch.MaxRank, IDs: watch.IDs[lo:hi]}
				}
				part, err := s.Search(ctx, q, db, 9, ropt)
				if err != nil {
					t.Fatal(err)
				}
				k := whole.K
				if !reflect.DeepEqual(part.IDs, whole.IDs[lo*k:hi*k]) || !reflect.DeepEqual(part.Dist, whole.Dist[lo*k:hi*k]) {
					t.Fatalf("%s %v rows %d…%d: lists differ from the whole search's", s.Name(), metric, lo, hi)
				}
				if opt.Watch != nil && !reflect.DeepEqual(part.Ranks, whole.Ranks[lo:hi]) {
					t.Fatalf("%s %v rows %d…%d: watched ranks differ", s.Name(), metric, lo, hi)
				}
			}
		}
	}
	bad := Options{Exclude: ExcludeSelf, SelfRange: true, SelfOffset: 650}
	if _, err := (Exact{}).Search(ctx, mat32.Matrix{Rows: 100, Cols: 5, Data: db.Data[:500]}, db, 3, bad); err == nil {
		t.Error("rows 650…749 of a 700-row database accepted")
	}
}
