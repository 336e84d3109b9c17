package metrics

import (
	"context"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// Neighbours returns the k nearest gallery items of the given query rows
// of in (rows of in.Emb), under distance (as Options.Distance), with the
// exact search Evaluate uses: leave-one-out excludes each query's own
// row, query/gallery searches in.Gallery. The lists are those of each
// query in Evaluate's search (an exact search ranks every query on its
// own; ties by lower index). IDs index in.Emb (leave-one-out) or
// in.Gallery.
func Neighbours(ctx context.Context, in Input, distance string, rows []int, k int) (*knn.Neighbors, error) {
	loo := in.Gallery == nil
	if err := checkInput(in, loo); err != nil {
		return nil, err
	}
	g := in.Emb
	if !loo {
		g = *in.Gallery
	}
	metric, q, g, err := prepareDistance(distance, in.Emb, g, loo)
	if err != nil {
		return nil, err
	}
	gallery := g.Rows
	if loo {
		gallery--
	}
	k = min(k, gallery)
	if k < 1 {
		return nil, inputErr("the gallery is empty")
	}
	sub := mat32.Matrix{Rows: len(rows), Cols: q.Cols, Data: make([]float32, 0, len(rows)*q.Cols)}
	for _, r := range rows {
		if r < 0 || r >= q.Rows {
			return nil, inputErr("query row %d outside 0..%d", r, q.Rows-1)
		}
		sub.Data = append(sub.Data, q.Row(r)...)
	}
	depth := k
	if loo {
		depth++ // the query's own row is dropped below, as the chunked search does
	}
	nb, err := knn.Exact{}.Search(ctx, sub, g, depth, knn.Options{Metric: metric})
	if err != nil {
		return nil, err
	}
	if loo {
		dropOwnRows(nb, func(i int) int32 { return int32(rows[i]) })
	}
	return nb, nil
}

// dropOwnRows turns the lists of a search one deeper without exclusion
// into those of the self-excluding search: query i's own database row
// own(i) is removed, or the last row when it is not among them. It
// compacts nb in place (K − 1).
func dropOwnRows(nb *knn.Neighbors, own func(i int) int32) {
	k := nb.K - 1
	for i := 0; i < nb.N; i++ {
		ids, dist := nb.IDsOf(i), nb.DistOf(i)
		out := i * k
		self := own(i)
		for j := range ids {
			if ids[j] == self {
				self = -2 // removed; no id equals −2
				continue
			}
			if out == (i+1)*k {
				break
			}
			nb.IDs[out], nb.Dist[out] = ids[j], dist[j]
			out++
		}
	}
	nb.K = k
	nb.IDs, nb.Dist = nb.IDs[:nb.N*k], nb.Dist[:nb.N*k]
}
