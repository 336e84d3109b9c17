package knn

import (
	"context"
	"math"
	"sort"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// BruteForce is the obviously-correct O(N·M·D) reference searcher used by
// tests to check the fast backends. It accumulates in float64.
type BruteForce struct{}

// Name implements Searcher.
func (BruteForce) Name() string { return "bruteforce" }

// Search implements Searcher.
func (BruteForce) Search(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*Neighbors, error) {
	if err := Validate(q, db, k, opt); err != nil {
		return nil, err
	}
	out := &Neighbors{N: q.Rows, K: k, IDs: make([]int32, q.Rows*k), Dist: make([]float32, q.Rows*k)}
	type cand struct {
		id int32
		d  float32
	}
	cands := make([]cand, 0, db.Rows)
	pad := float32(math.Inf(1))
	if opt.Metric == IP {
		pad = float32(math.Inf(-1))
	}
	for i := 0; i < q.Rows; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cands = cands[:0]
		qi := q.Row(i)
		for j := 0; j < db.Rows; j++ {
			if opt.Exclude == ExcludeSelf && opt.SelfOffset+i == j {
				continue
			}
			dj := db.Row(j)
			var s float64
			for t := range qi {
				if opt.Metric == L2 {
					d := float64(qi[t]) - float64(dj[t])
					s += d * d
				} else {
					s += float64(qi[t]) * float64(dj[t])
				}
			}
			cands = append(cands, cand{int32(j), float32(s)})
		}
		sort.SliceStable(cands, func(a, b int) bool {
			if opt.Metric == IP {
				return cands[a].d > cands[b].d
			}
			return cands[a].d < cands[b].d
		})
		for t := 0; t < k; t++ {
			if t < len(cands) {
				out.IDs[i*k+t], out.Dist[i*k+t] = cands[t].id, cands[t].d
			} else {
				out.IDs[i*k+t], out.Dist[i*k+t] = -1, pad
			}
		}
	}
	return out, nil
}
