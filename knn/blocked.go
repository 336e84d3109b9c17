package knn

import (
	"context"
	"slices"

	"github.com/dmlbench/dmlbench/internal/knnkey"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Blocked searches a database block by block (Rows rows each) with
// Searcher and merges the blocks' lists, so the searcher holds one block's
// working copy at a time (Exact packs its whole database into panels: as
// much anonymous memory as the database). With a memory-mapped database
// (fixtures/arrays.MapNPY) the search's anonymous memory is then
//
//	4·Rows·D (one packed block) + 2 · 16·C·(K+1) (the merged and the block's lists)
//
// bytes, C queries at a time with C·(K+1) ≤ Entries, K the depth (the
// watch window when ranks are watched), whatever the database's size.
//
// The result is that of Searcher over the whole database, bit for bit:
// each pair's distance is the same arithmetic in any block, and lists are
// merged by the searchers' own order (knnkey: distance, then the lower
// index). Watched ranks are read from merged lists as deep as the watch
// window: a row beyond that depth ranks beyond the window.
type Blocked struct {
	Searcher Searcher
	Rows     int // database rows per block
	// Entries bounds C·(K+1), the list entries of one query chunk
	// (0: 1<<22, 64 MiB for both lists).
	Entries int
}

// Name is the searcher's: blocking does not change a result.
func (b Blocked) Name() string { return b.Searcher.Name() }

// Watches reports that Blocked honours Options.Watch.
func (Blocked) Watches() bool { return true }

// SelfOffsets reports that Blocked honours Options.SelfRange.
func (Blocked) SelfOffsets() bool { return true }

// Search implements Searcher.
func (b Blocked) Search(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*Neighbors, error) {
	if err := Validate(q, db, k, opt); err != nil {
		return nil, err
	}
	self := opt.Exclude == ExcludeSelf
	depth := k
	if opt.Watch != nil {
		depth = max(k, opt.Watch.MaxRank)
	}
	depth = min(depth, db.Rows-btoi(self))
	out := &Neighbors{N: q.Rows, K: k, IDs: make([]int32, q.Rows*k), Dist: make([]float32, q.Rows*k)}
	if opt.Watch != nil {
		out.Ranks = make([][]int32, q.Rows)
	}
	chunk := max(1, b.entries()/(depth+1))
	stamp := make([]int32, db.Rows) // watched rows of the current query: its index + 1
	for c0 := 0; c0 < q.Rows; c0 += chunk {
		c1 := min(q.Rows, c0+chunk)
		lists, err := b.chunkLists(ctx, mat32.Matrix{Rows: c1 - c0, Cols: q.Cols, Data: q.Data[c0*q.Cols : c1*q.Cols]}, db, depth, c0, opt)
		if err != nil {
			return nil, err
		}
		for i, l := range lists {
			b.output(out, c0+i, l, k, opt, stamp)
		}
		if opt.Progress != nil {
			opt.Progress(c1, q.Rows)
		}
	}
	return out, nil
}

func (b Blocked) entries() int {
	if b.Entries > 0 {
		return b.Entries
	}
	return 1 << 22
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// chunkLists returns the depth nearest keys of each query of q (queries
// c0, c0+1, … of the search) over every block, merged in key order, the
// query's own row left out under self-exclusion.
func (b Blocked) chunkLists(ctx context.Context, q, db mat32.Matrix, depth, c0 int, opt Options) ([][]uint64, error) {
	self := opt.Exclude == ExcludeSelf
	lists := make([][]uint64, q.Rows)
	inner := b.Searcher
	if e, ok := inner.(Exact); ok && e.TileQ == 0 {
		// Exact keeps ~3·k candidates for each query of a tile in every
		// worker; deep lists get small tiles (the lists do not depend on
		// the tile), so those buffers stay near a tenth of Entries.
		e.TileQ = max(8, b.entries()/(30*(depth+1)))
		inner = e
	}
	var merged []uint64
	for b0 := 0; b0 < db.Rows; b0 += b.Rows {
		b1 := min(db.Rows, b0+b.Rows)
		block := mat32.Matrix{Rows: b1 - b0, Cols: db.Cols, Data: db.Data[b0*db.Cols : b1*db.Cols]}
		kb := min(depth+btoi(self), block.Rows)
		nb, err := inner.Search(ctx, q, block, kb, Options{Metric: opt.Metric, Threads: opt.Threads})
		if err != nil {
			return nil, err
		}
		for i := range lists {
			own := int32(-1)
			if self {
				own = int32(opt.SelfOffset + c0 + i)
			}
			ids, dist := nb.IDsOf(i), nb.DistOf(i)
			add := make([]uint64, 0, len(ids))
			for j, id := range ids {
				if id < 0 || int32(b0)+id == own {
					continue
				}
				d := dist[j]
				if opt.Metric == IP {
					d = -d
				}
				add = append(add, knnkey.Of(d, b0+int(id)))
			}
			merged = mergeKeys(merged[:0], lists[i], add, depth)
			lists[i] = append(lists[i][:0], merged...)
		}
	}
	return lists, nil
}

// mergeKeys appends to dst the first limit keys of the sorted a and b.
func mergeKeys(dst, a, b []uint64, limit int) []uint64 {
	for len(dst) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && a[0] < b[0]) {
			dst, a = append(dst, a[0]), a[1:]
		} else {
			dst, b = append(dst, b[0]), b[1:]
		}
	}
	return dst
}

// output writes query qi's first k keys of l (padded as the searchers pad)
// and the ranks of its watched rows within l.
func (b Blocked) output(out *Neighbors, qi int, l []uint64, k int, opt Options, stamp []int32) {
	ip := opt.Metric == IP
	pad := posInf
	if ip {
		pad = negInf
	}
	ids, dist := out.IDsOf(qi), out.DistOf(qi)
	for j := range ids {
		if j < len(l) {
			ids[j], dist[j] = knnkey.Output(l[j], ip)
		} else {
			ids[j], dist[j] = -1, pad
		}
	}
	if opt.Watch == nil {
		return
	}
	for _, id := range opt.Watch.IDs[qi] {
		stamp[id] = int32(qi + 1)
	}
	var ranks []int32
	for j, key := range l[:min(len(l), opt.Watch.MaxRank)] {
		if id, _ := knnkey.Output(key, ip); stamp[id] == int32(qi+1) {
			ranks = append(ranks, int32(j+1))
		}
	}
	slices.Sort(ranks)
	out.Ranks[qi] = ranks
}
