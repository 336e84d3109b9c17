package knn

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/dmlbench/dmlbench/internal/knnkey"
)

// watchBand makes a query's watched ranks those of the exact distances
// (Watch.Band, Watch.Order).
//
// Watched row b at value v has the band [v − B, v + B], B = Band(v): a row
// below it is exactly ahead of b, one above it exactly behind. low[b] and
// high[b] are the band's keys, widened so that both ascend in b (so
// binary searches find them); no candidate's key equals low[b]. Row b then has at least
//
//	ahead(b) = (candidates below low[b]) + (watched rows below low[b])
//
// rows exactly ahead of it; once 1 + ahead(b) > maxRank it can never rank
// within maxRank, nor can any row after it (ahead only grows with b), and
// the watch drops it as it drops rows by their rank without a band.
// Candidates are counted in the buckets of low instead of keys.
//
// A row's exact rank is 1 + ahead(b) + (rows inside its band exactly ahead
// of it). The scan keeps every unwatched candidate inside a live row's
// band (pool); when there is none, and no dropped watched row lies inside
// a live row's band (mixed), the searcher's order and the exact one agree
// on every live row's ranks — rank_m = 1 + m + (candidates below low[m]),
// as without a band (same-class rows may swap among themselves without
// changing the set of ranks: the candidates ahead of each are the same).
// Otherwise the rows inside the bands are put in exact order (Order) and
// each live row's rank counted.
type watchBand struct {
	low, high []uint64
	// edge interleaves them, edge[2b] = high[b], edge[2b+1] = low[b]:
	// count reads low[b] right after searching high, from the same line.
	edge   []uint64
	wAhead []int32  // wAhead[b]: watched rows with key < low[b]
	pool   []uint64 // unwatched candidates inside a live row's band
	mixed  bool     // a dropped watched row lies inside a live row's band
}

// newWatchBand sets w.low, w.high from w's (sorted) keys and the band.
func newWatchBand(w *watchState, band func(v float32) float32) *watchBand {
	n := len(w.keys)
	wb := &watchBand{low: make([]uint64, n), high: make([]uint64, n), wAhead: make([]int32, n)}
	for b, key := range w.keys {
		v := knnkey.Dist(key)
		e := float64(band(v))
		lo, hi := float64(v)-e, float64(v)+e
		l, h := float32(lo), float32(hi)
		if float64(l) > lo {
			l = math.Nextafter32(l, float32(math.Inf(-1)))
		}
		if float64(h) < hi {
			h = math.Nextafter32(h, float32(math.Inf(1)))
		}
		// low is the largest key of a value below l (its id, 2³²−1, is
		// no row's, so no candidate equals it), high the largest of h.
		wb.low[b], wb.high[b] = knnkey.Of(l, 0)-1, knnkey.Of(h, -1)
	}
	for b := n - 2; b >= 0; b-- {
		wb.low[b] = min(wb.low[b], wb.low[b+1])
	}
	for b := 1; b < n; b++ {
		wb.high[b] = max(wb.high[b], wb.high[b-1])
	}
	for b := range wb.wAhead {
		c, _ := slices.BinarySearch(w.keys, wb.low[b])
		wb.wAhead[b] = int32(c)
	}
	wb.edge = make([]uint64, 2*n)
	for b := range n {
		wb.edge[2*b], wb.edge[2*b+1] = wb.high[b], wb.low[b]
	}
	w.low, w.high = wb.low, wb.high
	return wb
}

// reset empties the pool and returns the rows that may rank within
// maxRank before any candidate is counted.
func (wb *watchBand) reset(maxRank int) int {
	wb.pool, wb.mixed = wb.pool[:0], false
	alive := 0
	for alive < len(wb.wAhead) && 1+int(wb.wAhead[alive]) <= maxRank {
		alive++
	}
	return alive
}

// dropped notes whether the first dropped watched row, keys[alive], lies
// inside a live row's band.
func (wb *watchBand) dropped(keys []uint64, alive int) {
	if alive > 0 && alive < len(keys) && keys[alive] <= wb.high[alive-1] {
		wb.mixed = true
	}
}

// count pools an unwatched candidate (key < high[alive−1]) inside a live
// row's band, counts it below the first live row whose low exceeds it,
// and reports the bucket (−1: none, or a watched row). One binary search:
// the rows whose band holds key (usually none or one) follow the first
// b with high[b] ≥ key. A dropped watched row above keys[alive−1] is
// pooled as if unwatched: poolKeys merges it with the watched keys, and
// it is counted below no live row.
func (wb *watchBand) count(w *watchState, key uint64) int {
	return wb.countFrom(w, key, wb.firstHigh(w.alive, key))
}

// firstHigh returns the first b < a with high[b] ≥ key (key ≤ high[a−1]),
// branch-free (see watchState.count).
func (wb *watchBand) firstHigh(a int, key uint64) int {
	e := wb.edge
	b := 0
	for n := a; n > 1; {
		half := n >> 1
		_, lt := bits.Sub64(e[2*(b+half-1)], key, 0)
		b += half & -int(lt)
		n -= half
	}
	return b
}

// firstHigh4 is firstHigh for four keys at once: the four chains of
// dependent loads overlap instead of following each other.
func (wb *watchBand) firstHigh4(a int, k0, k1, k2, k3 uint64) (b0, b1, b2, b3 int) {
	e := wb.edge
	for n := a; n > 1; {
		half := n >> 1
		_, l0 := bits.Sub64(e[2*(b0+half-1)], k0, 0)
		_, l1 := bits.Sub64(e[2*(b1+half-1)], k1, 0)
		_, l2 := bits.Sub64(e[2*(b2+half-1)], k2, 0)
		_, l3 := bits.Sub64(e[2*(b3+half-1)], k3, 0)
		b0 += half & -int(l0)
		b1 += half & -int(l1)
		b2 += half & -int(l2)
		b3 += half & -int(l3)
		n -= half
	}
	return b0, b1, b2, b3
}

// countFrom is count given b = firstHigh(w.alive, key).
func (wb *watchBand) countFrom(w *watchState, key uint64, b int) int {
	a := w.alive
	if wb.edge[2*b+1] > key {
		return b // inside no band, so no watched row (low[j] ≤ keys[j] ≤ high[j])
	}
	for j := b; j < a && w.keys[j] <= key; j++ {
		if w.keys[j] == key {
			return -1 // a watched row
		}
	}
	lo := b
	for lo < a && wb.low[lo] <= key {
		lo++
	}
	if lo > b {
		wb.pool = append(wb.pool, key)
	}
	if lo == a {
		return -1
	}
	return lo
}

// open reports whether the ranks need Order.
func (wb *watchBand) open() bool { return len(wb.pool) > 0 || wb.mixed }

// poolKeys returns the sorted keys of every row that may lie inside a
// live row's band: the pooled candidates and the watched rows.
func (wb *watchBand) poolKeys(w *watchState) []uint64 {
	out := append(slices.Clone(wb.pool), w.keys...)
	slices.Sort(out)
	return slices.Compact(out)
}

// resolve returns the exact ranks within maxRank of the live rows
// keys[:alive], given the rows certainly ahead of each (ahead) and the
// sorted keys of every row inside their bands (pool).
func (wb *watchBand) resolve(w *watchState, ahead []int, pool []uint64, order func(ids []int32)) []int32 {
	// The pool ranges inside the live rows' bands (lo, hi) ascend; a row
	// alone in its band needs no order. U, their union, is put in exact
	// order; a row's rows exactly ahead inside its band are then its
	// position in U less U's rows below its band (already in ahead).
	alive := w.alive
	lo, hi := make([]int, alive), make([]int, alive)
	inU := make([]bool, len(pool))
	covered := 0
	for m := 0; m < alive; m++ {
		lo[m], _ = slices.BinarySearch(pool, wb.low[m])
		hi[m] = lo[m] + sort.Search(len(pool)-lo[m], func(i int) bool { return pool[lo[m]+i] > wb.high[m] })
		if hi[m]-lo[m] > 1 {
			for i := max(lo[m], covered); i < hi[m]; i++ {
				inU[i] = true
			}
			covered = max(covered, hi[m])
		}
	}
	below := make([]int32, len(pool)+1) // below[i]: U's entries before pool[i]
	var ids []int32
	for i, in := range inU {
		below[i+1] = below[i]
		if in {
			below[i+1]++
			ids = append(ids, int32(uint32(pool[i])))
		}
	}
	type idPos struct{ id, pos int32 }
	var byID []idPos
	if len(ids) > 0 {
		order(ids)
		byID = make([]idPos, len(ids))
		for p, id := range ids {
			byID[p] = idPos{id, int32(p)}
		}
		slices.SortFunc(byID, func(a, b idPos) int { return cmp.Compare(a.id, b.id) })
	}
	var out []int32
	for m := 0; m < alive; m++ {
		if 1+ahead[m] > w.maxRank {
			break
		}
		r := 1 + ahead[m]
		if hi[m]-lo[m] > 1 {
			me := int32(uint32(w.keys[m]))
			j, _ := slices.BinarySearchFunc(byID, me, func(e idPos, id int32) int { return cmp.Compare(e.id, id) })
			r += int(byID[j].pos) - int(below[lo[m]])
		}
		if r <= w.maxRank {
			out = append(out, int32(r))
		}
	}
	slices.Sort(out)
	return out
}

// exactRanks is resolve over every candidate's key (sorted, the query's
// own row left out under self-exclusion): the speculative cap's fallback.
func (wb *watchBand) exactRanks(w *watchState, all []uint64, order func(ids []int32)) []int32 {
	alive := wb.reset(w.maxRank)
	ahead := make([]int, alive)
	for m := range ahead {
		ahead[m], _ = slices.BinarySearch(all, wb.low[m])
	}
	saved := w.alive
	w.alive = alive
	defer func() { w.alive = saved }()
	return wb.resolve(w, ahead, all, order)
}

// order returns query qi's Watch.Order, or nil.
func (r *exactRun) order(qi int) func(ids []int32) {
	if r.watchOpt == nil || r.watchOpt.Order == nil {
		return nil
	}
	return func(ids []int32) { r.watchOpt.Order(qi, ids) }
}
