package knn

import (
	"math/bits"
	"slices"
)

// watchState ranks one query's watched rows during the scan (Options.Watch).
//
// Before the scan the watched rows' keys (distance bits, index) are computed
// with the same micro-kernel arithmetic as the scan itself, so they compare
// exactly with every candidate key. During the scan each candidate whose key
// is below the largest still-relevant watched key is counted in the bucket
// between two consecutive watched keys; the rank of the m-th watched row
// (0-based, ascending) is then
//
//	rank_m = 1 + m + Σ_{b ≤ m} cnt[b]
//
// Counts only grow, so once rank_m > MaxRank the watched rows from m on can
// never rank within MaxRank and the bound shrinks: at most ~MaxRank
// candidates per query are ever counted, whatever the data.
type watchState struct {
	keys    []uint64 // watched rows' keys, ascending
	cnt     []int32  // cnt[b]: counted candidates with keys[b−1] < key < keys[b]
	alive   int      // keys[:alive] may still rank within maxRank
	tot     int      // Σ cnt[:alive]
	maxRank int
}

func (w *watchState) reset(maxRank int) {
	clear(w.cnt)
	w.maxRank = maxRank
	w.alive = min(len(w.keys), maxRank) // the m-th watched row ranks ≥ m+1
	w.tot = 0
}

// count takes a candidate key below keys[alive−1] (not the query itself)
// and reports whether the bound shrank.
func (w *watchState) count(key uint64) bool {
	// Branch-free lower bound (the comparisons are unpredictable: the
	// borrow of a subtraction per halving instead of a mispredicted branch;
	// the compiler keeps a plain if as a branch inside a loop):
	// lo = the first b < alive with keys[b] >= key (key < keys[alive−1]).
	keys := w.keys[:w.alive]
	lo := 0
	for n := len(keys); n > 1; {
		half := n >> 1
		_, lt := bits.Sub64(keys[lo+half-1], key, 0) // 1 when keys[…] < key
		lo += half & -int(lt)
		n -= half
	}
	if w.keys[lo] == key { // a watched row itself: ranked by its position
		return false
	}
	w.cnt[lo]++
	w.tot++
	shrank := false
	for w.alive > 0 && w.alive+w.tot > w.maxRank {
		w.alive--
		w.tot -= int(w.cnt[w.alive])
		shrank = true
	}
	return shrank
}

// ranks returns the ranks of the watched rows within maxRank, ascending.
func (w *watchState) ranks() []int32 {
	out := make([]int32, w.alive)
	c := 0
	for m := range out {
		c += int(w.cnt[m])
		out[m] = int32(m + 1 + c)
	}
	return out
}

// offer is push plus the watch count; it reports whether the float
// pre-filter threshold (thrF) may have changed.
func (t *topk) offer(key uint64, k int, scratch []uint64) bool {
	tight := t.push(key, k, scratch)
	if w := t.w; w != nil && w.alive > 0 && key < w.keys[w.alive-1] && w.count(key) {
		tight = true
	}
	return tight
}

// initWatch computes every watched key with the scan's micro-kernel (the
// accumulation of a pair does not depend on its place in a block, see the
// kernel contract) and prepares one watchState per query. r.nq, r.nx and
// r.bpack must be set.
func (r *exactRun) initWatch(w *Watch) {
	n, d, nr := r.q.Rows, r.d, r.nr
	r.watch = make([]watchState, n)
	r.out.Ranks = make([][]int32, n)
	var noCol [nrMax]float32
	for i := range noCol {
		noCol[i] = negInf
	}
	chunks := (n + 255) / 256
	parallelFor(r.threads, chunks, func(c int) {
		apack := alignedFloats(mr * d)
		bpack := alignedFloats(nr * d)
		gather := Matrix{Rows: nr, Cols: d, Data: make([]float32, nr*d)}
		var nx [nrMax]float32
		ep := new(kernEpi)
		ep.scale, ep.lo = r.scale, r.lo
		ep.thr = fill8(negInf)
		ep.cthr = &noCol[0]
		ep.nx = &nx[0]
		for i := c * 256; i < min(n, (c+1)*256); i++ {
			ids := w.IDs[i]
			ws := &r.watch[i]
			ws.keys = make([]uint64, len(ids))
			ws.cnt = make([]int32, len(ids))
			if len(ids) == 0 {
				continue
			}
			packPanel(apack, r.q, i, mr)
			clear(ep.nq[:])
			ep.nq[0] = r.nq[i]
			for s := 0; s < len(ids); s += nr {
				m := min(nr, len(ids)-s)
				clear(gather.Data)
				clear(nx[:])
				for j := 0; j < m; j++ {
					copy(gather.Row(j), r.db.Row(int(ids[s+j])))
					nx[j] = r.nx[ids[s+j]]
				}
				packPanel(bpack, gather, 0, nr)
				r.kern(ptrAt(apack, 0), ptrAt(bpack, 0), d, ep)
				for j := 0; j < m; j++ {
					ws.keys[s+j] = keyOf(ep.c[j], int(ids[s+j]))
				}
			}
			slices.Sort(ws.keys)
		}
	})
}

// watchBound raises a top-k bound to the watch bound where that is larger.
func (t *topk) watchBound(b uint64) uint64 {
	if w := t.w; w != nil && w.alive > 0 && w.keys[w.alive-1] > b {
		return w.keys[w.alive-1]
	}
	return b
}
