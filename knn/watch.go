package knn

import (
	"math"
	"math/bits"
	"slices"

	"github.com/dmlbench/dmlbench/internal/knnkey"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
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
//
// Speculative cap. When watched rows lie far beyond rank maxRank (a noisy
// class among many rows), the scan, which meets candidates in database
// order, counts several times maxRank candidates before the bound comes
// down (about 3 500 per query on 20 000 rows for maxRank 1 000). initWatch therefore estimates from a sample of database rows a
// key spec that somewhat more than maxRank rows lie below (a margin of four
// standard deviations), and the scan starts as if the watched rows with
// keys ≥ spec had been dropped already. Meanwhile every candidate below spec
// is tallied (below; the kernel threshold stays ≥ spec until then). Once
// below reaches maxRank the guess is proven (a dropped watched row has
// rank ≥ 1 + below > maxRank) and the cap is lifted; a query whose guess is
// never proven is ranked again by an exact scan (exactRanks). The ranks are
// thus always the exact ones; only the work depends on the guess.
type watchState struct {
	keys    []uint64 // watched rows' keys, ascending
	cnt     []int32  // cnt[b]: counted candidates with low[b−1] ≤ key < low[b]
	alive   int      // keys[:alive] may still rank within maxRank
	tot     int      // Σ cnt[:alive]
	maxRank int
	// low[b] and high[b] bound the keys that may be on either side of
	// watched row b exactly: keys without a band (Options.Watch.Band),
	// else see watchBand.
	low, high []uint64
	band      *watchBand
	bandFn    func(v float32) float32 // Watch.Band for this query, or nil
	specLow   uint64                  // candidates below it rank ahead of every dropped row

	spec    uint64 // speculative cap (with hasSpec)
	hasSpec bool   // initWatch set spec
	specing bool   // the cap is in force and not yet proven
	dropped bool   // the cap dropped watched rows that maxRank alone kept
	below   int    // candidates with key < spec while specing

	bound   uint64   // candidates below it are queued (setBound)
	pend    []uint64 // queued candidates, counted by drain
	pendCap int
}

func (w *watchState) reset(maxRank int) {
	clear(w.cnt)
	w.maxRank = maxRank
	w.alive = min(len(w.keys), maxRank) // the m-th watched row ranks ≥ m+1
	if w.bandFn != nil && w.band == nil {
		w.band = newWatchBand(w, w.bandFn) // built when the query's scan starts
	}
	if w.band != nil {
		w.alive = w.band.reset(maxRank)
	}
	w.tot = 0
	w.specing, w.dropped, w.below = false, false, 0
	if w.hasSpec {
		n, _ := slices.BinarySearch(w.keys, w.spec) // keys[:n] < spec
		if n < w.alive {
			w.alive, w.specing, w.dropped = n, true, true
			w.specLow = min(w.spec, w.low[n])
		}
	}
	if w.band != nil {
		w.band.dropped(w.keys, w.alive)
	}
	if w.pend == nil && len(w.keys) > 0 {
		w.pend = make([]uint64, 0, min(16, w.pendCap))
	}
	w.pend = w.pend[:0]
	w.setBound()
}

// release drops a finished query's buffers (they are per query, and the
// scan holds every query's until it ends).
func (w *watchState) release() {
	w.keys, w.cnt, w.low, w.high, w.band, w.bandFn, w.pend = nil, nil, nil, nil, nil, nil, nil
}

// needsRecount reports whether the speculative cap dropped watched rows and
// was never proven during the scan.
func (w *watchState) needsRecount() bool { return w.specing && w.dropped }

// count takes a candidate key below high[alive−1] (not the query itself)
// and reports whether the bound shrank.
func (w *watchState) count(key uint64) bool {
	if w.band != nil {
		lo := w.band.count(w, key)
		if lo < 0 {
			return false
		}
		return w.add(lo)
	}
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
	return w.add(lo)
}

// add counts a candidate below watched row lo and drops the rows that can
// no longer rank within maxRank; it reports whether the bound shrank.
func (w *watchState) add(lo int) bool {
	w.cnt[lo]++
	w.tot++
	shrank := false
	for w.alive > 0 && w.minRank(w.alive-1) > w.maxRank {
		w.alive--
		w.tot -= int(w.cnt[w.alive])
		shrank = true
		if w.band != nil {
			w.band.dropped(w.keys, w.alive)
		}
	}
	return shrank
}

// minRank is the least rank watched row m (< alive) can have, tot being
// the candidates counted below low[m]: without a band its rank, and at
// least 1 + m + tot; with one, 1 + tot + the watched rows below low[m].
func (w *watchState) minRank(m int) int {
	if w.band != nil {
		return 1 + w.tot + int(w.band.wAhead[m])
	}
	return m + 1 + w.tot
}

// ranks returns the ranks of the watched rows within maxRank, ascending
// (with a band, the exact ones: order puts rows in exact order).
func (w *watchState) ranks(order func(ids []int32)) []int32 {
	if w.band != nil && w.band.open() {
		ahead := make([]int, w.alive)
		c := 0
		for m := range ahead {
			c += int(w.cnt[m])
			ahead[m] = c + int(w.band.wAhead[m])
		}
		return w.band.resolve(w, ahead, w.band.poolKeys(w), order)
	}
	out := make([]int32, 0, w.alive)
	c := 0
	for m := 0; m < w.alive; m++ {
		c += int(w.cnt[m])
		if r := m + 1 + c; r <= w.maxRank {
			out = append(out, int32(r))
		}
	}
	return out
}

// offer is push plus the watch count; it reports whether the float
// pre-filter threshold (thrF) may have changed. Watched candidates are
// queued (pend) and counted a batch at a time (drain): the query's
// watch state is then read once per batch, from L1, instead of once
// per candidate from wherever the scan left it.
func (t *topk) offer(key uint64, k int, scratch []uint64) bool {
	tight := t.push(key, k, scratch)
	if w := t.w; w != nil && key < w.bound {
		w.pend = append(w.pend, key) // grows to pendCap: queries with few candidates keep short queues
		if len(w.pend) >= w.pendCap && w.drain() {
			tight = true
		}
	}
	return tight
}

// pendCap is the watch queue's length per query for n queries: long
// enough that a drain's loads of the query's state are amortised (on the
// noisy 20 000 × 128 input 256 takes 15 % less CPU time than 64, 25 %
// less than 16), short enough that the queues of every query of the
// symmetric path stay within 64 MiB (8·pendCap bytes each; a queue grows
// to its length only when the query meets that many candidates).
func pendCap(n int) int {
	return min(256, max(32, (64<<20)/(8*max(n, 1))))
}

// drain counts the queued candidates in arrival order, exactly as if
// each had been counted when offered (a candidate that the bound has
// since passed is skipped, as the scan's threshold would have skipped
// it), and reports whether the watch bound moved.
func (w *watchState) drain() bool {
	old := w.bound
	pend := w.pend
	i := 0
	if w.band != nil {
		// Four bucket searches at a time, against the rows alive when
		// they start. A search's answer, the first b with high[b] ≥ key,
		// stays right after rows drop: a key that is still counted lies
		// below high[alive−1], so its b is below alive either way.
		for ; i+4 <= len(pend) && w.alive > 1; i += 4 {
			var bs [4]int
			bs[0], bs[1], bs[2], bs[3] = w.band.firstHigh4(w.alive, pend[i], pend[i+1], pend[i+2], pend[i+3])
			for t, key := range pend[i : i+4] {
				w.tally(key)
				if w.alive == 0 || key >= w.high[w.alive-1] {
					continue
				}
				if lo := w.band.countFrom(w, key, bs[t]); lo >= 0 {
					w.add(lo)
				}
			}
		}
	}
	for _, key := range pend[i:] {
		w.tally(key)
		if w.alive > 0 && key < w.high[w.alive-1] {
			w.count(key)
		}
	}
	w.pend = pend[:0]
	w.setBound()
	return w.bound != old
}

// tally counts a candidate below the speculative cap and lifts the cap
// once maxRank of them prove it.
func (w *watchState) tally(key uint64) {
	if w.specing && key < w.specLow {
		w.below++
		if w.below >= w.maxRank {
			w.specing = false
		}
	}
}

// setBound sets the key below which candidates must be counted: the
// speculative cap while it is unproven, and the band's top of the last
// row that may still rank within maxRank.
func (w *watchState) setBound() {
	w.bound = 0
	if w.specing {
		w.bound = w.spec // every candidate below the cap must be tallied
	}
	if w.alive > 0 {
		w.bound = max(w.bound, w.high[w.alive-1])
	}
}

// initWatch computes every watched key with the scan's micro-kernel (the
// accumulation of a pair does not depend on its place in a block, see the
// kernel contract) and prepares one watchState per query. r.nq, r.nx and
// r.bpack must be set. Queries go mr at a time, one per kernel row, against
// the union of their watched rows: consecutive queries usually watch the
// same rows (their class), so each row is gathered and packed once per
// block instead of once per query; the keys are the same either way.
func (r *exactRun) initWatch(w *Watch) {
	n, d, nr := r.q.Rows, r.d, r.nr
	r.watch = make([]watchState, n)
	r.watchOpt = w
	r.out.Ranks = make([][]int32, n)
	r.out.RanksExact = w.Band != nil && w.Order != nil
	var noCol [nrMax]float32
	for i := range noCol {
		noCol[i] = negInf
	}
	const blocksPerChunk = 42 // 252 queries per parallel work item
	nblk := (n + mr - 1) / mr
	parallel.For(r.threads, (nblk+blocksPerChunk-1)/blocksPerChunk, func(c int) {
		apack := alignedFloats(mr * d)
		bpack := alignedFloats(nr * d)
		gather := mat32.Matrix{Rows: nr, Cols: d, Data: make([]float32, nr*d)}
		var nx [nrMax]float32
		var uni []int32    // the block's watched rows, ascending, distinct
		var vals []float32 // [len(uni)][mr] kernel values
		ep := new(kernEpi)
		ep.scale, ep.lo = r.scale, r.lo
		ep.thr = fill8(negInf)
		ep.cthr = &noCol[0]
		ep.nx = &nx[0]
		for b := c * blocksPerChunk; b < min(nblk, (c+1)*blocksPerChunk); b++ {
			i0 := b * mr
			i1 := min(n, i0+mr)
			uni = uni[:0]
			for i := i0; i < i1; i++ {
				ids := w.IDs[i]
				ws := &r.watch[i]
				ws.keys = make([]uint64, len(ids))
				ws.cnt = make([]int32, len(ids))
				ws.pendCap = pendCap(n)
				if r.spec.pend > 0 {
					ws.pendCap = r.spec.pend
				}
				uni = append(uni, ids...)
			}
			if len(uni) == 0 {
				continue
			}
			slices.Sort(uni)
			uni = slices.Compact(uni)
			packPanel(apack, r.q, i0, mr)
			clear(ep.nq[:])
			copy(ep.nq[:mr], r.nq[i0:i1])
			vals = slices.Grow(vals[:0], len(uni)*mr)[:len(uni)*mr]
			for s := 0; s < len(uni); s += nr {
				m := min(nr, len(uni)-s)
				clear(gather.Data)
				clear(nx[:])
				for j := 0; j < m; j++ {
					copy(gather.Row(j), r.db.Row(int(uni[s+j])))
					nx[j] = r.nx[uni[s+j]]
				}
				packPanel(bpack, gather, 0, nr)
				r.kern(ptrAt(apack, 0), ptrAt(bpack, 0), d, ep)
				for j := 0; j < m; j++ {
					for rr := 0; rr < mr; rr++ {
						vals[(s+j)*mr+rr] = ep.c[rr*nr+j]
					}
				}
			}
			for i := i0; i < i1; i++ {
				ws := &r.watch[i]
				for t, id := range w.IDs[i] {
					pos, _ := slices.BinarySearch(uni, id)
					ws.keys[t] = knnkey.Of(vals[pos*mr+i-i0], int(id))
				}
				slices.Sort(ws.keys)
				ws.low, ws.high = ws.keys, ws.keys
				if r.out.RanksExact {
					ws.bandFn = func(v float32) float32 { return w.Band(i, v) }
				}
			}
		}
	})
	r.initSpec()
}

// specParams are the speculative cap's parameters (see watchState and
// initSpec); Exact.spec overrides the defaults so that tests can force
// unproven caps.
type specParams struct {
	sample int     // database rows sampled
	stage1 int     // of which the first stage scores these
	factor float64 // the cap aims at rank factor·maxRank (+ margin)
	sigmas float64 // plus this many standard deviations of the count
	pend   int     // the watch queue's length (0: pendCap)
}

// sampleRank is the rank among S evenly spaced sample keys of nd rows
// that lies beyond rank k of all rows unless the sample is sigmas standard
// deviations off: λ + σ√λ + σ with λ = factor·S·k/nd, the expected number
// of sample keys within rank k.
func (sp specParams) sampleRank(S, k, nd int) int {
	lambda := sp.factor * float64(S) * float64(k) / float64(nd)
	return max(1, int(lambda+sp.sigmas*math.Sqrt(lambda)+sp.sigmas))
}

func defaultSpecParams() specParams {
	return specParams{sample: 1024, stage1: 256, factor: 1.0, sigmas: 4.0}
}

// initSpec sets each query's speculative cap: among the keys of S evenly
// spaced database rows, the s-th smallest with s = λ + 4√λ + 4 where
// λ = S·maxRank/N is the expected count of sample rows below rank maxRank
// (so the cap lies beyond rank maxRank unless the sample is four standard
// deviations off, and about rank 1.6·maxRank for S = 1024, N = 20 000);
// only when N ≥ 4·maxRank (otherwise most rows count anyway). S = 1024
// rather than 2048 halves the sampling (scoring and selection) at the
// price of a cap about 0.2·maxRank farther, i.e. more counted candidates:
// on the noisy 20 000 × 128 input (maxRank 1 000) the whole eval is about
// 2–3 % faster (7 interleaved whole-process runs, twice).
func (r *exactRun) initSpec() {
	n, nr, nd := r.q.Rows, r.nr, r.db.Rows
	S := min(r.spec.sample, nd)
	if S == 0 || nd < 4*r.maxRank {
		return
	}
	sel := r.spec.sampleRank(S, r.maxRank, nd)
	if sel >= S {
		return
	}
	want := false
	for i := range r.watch {
		if len(r.watch[i].keys) > 0 {
			want = true
			break
		}
	}
	if !want {
		return
	}
	// Pack the sample rows (evenly spaced) as database panels, in an order
	// whose first S1 rows are themselves evenly spaced: the first stage
	// scores only those and skips queries whose farthest live watched row
	// is estimated within 2·maxRank (little to gain; well-clustered data).
	S1 := min(S, max(nr, r.spec.stage1/nr*nr))
	np1 := (S1 + nr - 1) / nr
	spack, sid, snx, np := r.sampleRows(S, S1)
	// The top-k bounds (initKSpec) come from the same sample rows (in
	// another order): scored once here for both.
	ksel := r.kspecSel()
	if ksel > 0 {
		r.kspec = make([]uint64, n)
	}
	nblk := (n + mr - 1) / mr
	parallel.For(r.threads, (nblk+63)/64, func(c int) {
		sc := r.newSampleScorer(spack, sid, snx)
		keys := sc.keys
		scratch := make([]uint64, S)
		for b := c * 64; b < min(nblk, (c+1)*64); b++ {
			i0 := b * mr
			sc.start(i0)
			sc.score(0, np1)
			var need [mr]bool
			any := false
			if ksel > 0 {
				sc.score(np1, np)
				for rr := 0; rr < mr && i0+rr < n; rr++ {
					r.kspec[i0+rr] = radixKth(keys[rr], ksel, scratch)
				}
			}
			for rr := 0; rr < mr && i0+rr < n; rr++ {
				w := &r.watch[i0+rr]
				alive := min(len(w.keys), r.maxRank)
				if alive == 0 {
					continue
				}
				far := w.keys[alive-1]
				c1 := 0
				for _, k := range keys[rr][:S1] {
					if k < far {
						c1++
					}
				}
				// estimated rank of far: c1·nd/S1; worth a cap beyond 2·maxRank
				if int64(c1)*int64(nd) > 2*int64(r.maxRank)*int64(S1) {
					need[rr], any = true, true
				}
			}
			if !any {
				continue
			}
			if ksel == 0 {
				sc.score(np1, np)
			}
			for rr := 0; rr < mr && i0+rr < n; rr++ {
				if need[rr] {
					w := &r.watch[i0+rr]
					w.spec = specKth(keys[rr], S1, sel, scratch)
					w.hasSpec = true
				}
			}
		}
	})
}

// specKth returns the sel-th smallest of the distinct sample keys a, whose
// first s1 are themselves an evenly spaced sample (initSpec's first stage):
// the t-th smallest of those, with t a few standard deviations above the
// expected sel·s1/len(a), is a pivot below which usually at least sel of
// all keys lie; then the sel-th smallest overall is the sel-th of the keys
// below the pivot, a few hundred instead of len(a). When fewer than sel lie
// below it the whole sample is searched instead; the result is the same
// either way. scratch must be at least len(a) long.
func specKth(a []uint64, s1, sel int, scratch []uint64) uint64 {
	e := float64(sel) * float64(s1) / float64(len(a))
	t := int(e + 4*math.Sqrt(e) + 4)
	if t >= s1 || s1 >= len(a) {
		return radixKth(a, sel, scratch)
	}
	pivot := radixKth(a[:s1], t, scratch)
	c := 0
	for _, x := range a { // branch-free filter: keys below the pivot
		scratch[c] = x
		_, lt := bits.Sub64(x, pivot, 0)
		c += int(lt)
	}
	if c < sel {
		return radixKth(a, sel, scratch)
	}
	return radixKth(scratch[:c], sel, scratch)
}

// exactRanks ranks query qi's watched rows by scoring every database row
// with the scan's kernel (the same keys as the scan): the fallback for a
// speculative cap that was never proven.
func (r *exactRun) exactRanks(qi int, w *watchState) []int32 {
	if r.recounts != nil {
		r.recounts.Add(1)
	}
	all := r.allKeys(qi)
	slices.Sort(all)
	if w.band != nil {
		return w.band.exactRanks(w, all, r.order(qi))
	}
	var out []int32
	for _, key := range w.keys {
		rank, _ := slices.BinarySearch(all, key) // candidates below it
		if rank+1 > w.maxRank {
			break
		}
		out = append(out, int32(rank+1))
	}
	return out
}

// watchBound raises a top-k bound to the watch bound where that is larger.
func (t *topk) watchBound(b uint64) uint64 {
	if w := t.w; w != nil {
		b = max(b, w.bound)
	}
	return b
}

// initKSpec sets r.kspec, a speculative bound per query for the buffered
// select (k > smallK): keys at or above it are not taken, and the
// pre-filter starts at it instead of +Inf. A buffer filled in database
// order otherwise admits every candidate until its first compaction, and
// about k·ln(N/k) in all; with the bound only candidates below it enter
// from the start. The bound is the sel-th smallest key among S evenly
// spaced database rows, sel = λ + 4√λ + 4 with λ = S·k/N the expected
// number of sample keys within rank k (the factor and the 4 standard
// deviations are those of the watch's cap, r.spec), so that it lies beyond rank k unless
// the sample is about four standard deviations off. When it does not
// (fewer than k candidates below it after the scan), flush selects from
// every candidate again (exactList): the neighbours are exact either way.
// Used when the bound is expected to lie well inside the database
// (sel ≤ S/4, N ≥ 2S).
func (r *exactRun) initKSpec() {
	sel := r.kspecSel()
	if sel == 0 || r.kspec != nil {
		return // none, or set with the watch's caps (initSpec)
	}
	n, S := r.q.Rows, min(r.spec.sample, r.db.Rows)
	spack, sid, snx, np := r.sampleRows(S, S)
	r.kspec = make([]uint64, n)
	nblk := (n + mr - 1) / mr
	parallel.For(r.threads, (nblk+63)/64, func(c int) {
		sc := r.newSampleScorer(spack, sid, snx)
		keys := sc.keys
		scratch := make([]uint64, S)
		for b := c * 64; b < min(nblk, (c+1)*64); b++ {
			i0 := b * mr
			sc.start(i0)
			sc.score(0, np)
			for rr := 0; rr < mr && i0+rr < n; rr++ {
				r.kspec[i0+rr] = radixKth(keys[rr], sel, scratch)
			}
		}
	})
}

// kspecSel is the rank among the sample keys that initKSpec takes as a
// query's bound, or 0 when no bound is used.
func (r *exactRun) kspecSel() int {
	nd := r.db.Rows
	S := min(r.spec.sample, nd)
	if r.noKSpec || r.keff <= smallK || nd < 2*S || S < 4 {
		return 0
	}
	sel := r.spec.sampleRank(S, r.keff, nd)
	if sel > S/4 {
		return 0
	}
	return sel
}

// exactList fills query qi's buffer with its keff nearest candidates by
// scoring every database row with the scan's kernel (the same keys as the
// scan): the fallback for a speculative top-k bound that proved too tight.
func (r *exactRun) exactList(qi int, st *topk) {
	if r.recounts != nil {
		r.recounts.Add(1)
	}
	all := r.allKeys(qi)
	radixSelect(all, r.keff, make([]uint64, len(all)))
	st.buf = append(st.buf[:0], all[:r.keff]...)
}

// allKeys scores every database row for query qi with the scan's kernel
// (the same keys as the scan), the query itself left out under
// self-exclusion: the exact fallbacks' input.
func (r *exactRun) allKeys(qi int) []uint64 {
	d, nr, nd := r.d, r.nr, r.db.Rows
	apack := alignedFloats(mr * d)
	packPanel(apack, r.q, qi, mr)
	ep := new(kernEpi)
	ep.scale, ep.lo = r.scale, r.lo
	ep.thr = fill8(negInf)
	ep.cthr = &r.noCol[0]
	ep.nq[0] = r.nq[qi]
	all := make([]uint64, 0, nd)
	for p := 0; p < r.npan; p++ {
		ep.nx = &r.nx[p*nr]
		r.kern(ptrAt(apack, 0), ptrAt(r.bpack, p*nr*d), d, ep)
		for j := 0; j < nr && p*nr+j < nd; j++ {
			if id := p*nr + j; !(r.excl && id == r.self+qi) {
				all = append(all, knnkey.Of(ep.c[j], id))
			}
		}
	}
	return all
}

// sampleRows packs S evenly spaced database rows as kernel panels, in an
// order whose first s1 rows are themselves evenly spaced (s1 = S: plain
// order), for the speculative bounds: sid are the rows' indices, snx their
// squared norms, np the panels.
func (r *exactRun) sampleRows(S, s1 int) (spack []float32, sid []int, snx []float32, np int) {
	d, nr, nd := r.d, r.nr, r.db.Rows
	np = (S + nr - 1) / nr
	gather := mat32.Matrix{Rows: np * nr, Cols: d, Data: make([]float32, np*nr*d)}
	sid = make([]int, S)
	snx = make([]float32, np*nr)
	stride := (S + s1 - 1) / s1
	t := 0
	for phase := 0; phase < stride; phase++ {
		for u := phase; u < S; u += stride {
			sid[t] = int(int64(u) * int64(nd) / int64(S))
			copy(gather.Row(t), r.db.Row(sid[t]))
			snx[t] = r.nx[sid[t]]
			t++
		}
	}
	spack = alignedFloats(np * nr * d)
	for p := 0; p < np; p++ {
		packPanel(spack[p*nr*d:], gather, p*nr, nr)
	}
	return spack, sid, snx, np
}

// sampleScorer appends, for the mr queries packed in apack, the keys of
// sample panels [p0, p1) (see sampleRows) to keys[row].
type sampleScorer struct {
	r     *exactRun
	apack []float32
	ep    *kernEpi
	keys  [][]uint64
	spack []float32
	sid   []int
	snx   []float32
}

func (r *exactRun) newSampleScorer(spack []float32, sid []int, snx []float32) *sampleScorer {
	sc := &sampleScorer{r: r, apack: alignedFloats(mr * r.d), ep: new(kernEpi), keys: make([][]uint64, mr),
		spack: spack, sid: sid, snx: snx}
	for i := range sc.keys {
		sc.keys[i] = make([]uint64, 0, len(sid))
	}
	sc.ep.scale, sc.ep.lo = r.scale, r.lo
	sc.ep.thr = fill8(negInf)
	sc.ep.cthr = &r.noCol[0]
	return sc
}

// start packs the queries of block i0 and empties the key lists.
func (sc *sampleScorer) start(i0 int) {
	r := sc.r
	packPanel(sc.apack, r.q, i0, mr)
	clear(sc.ep.nq[:])
	copy(sc.ep.nq[:mr], r.nq[i0:min(i0+mr, len(r.nq))])
	for i := range sc.keys {
		sc.keys[i] = sc.keys[i][:0]
	}
}

func (sc *sampleScorer) score(p0, p1 int) {
	r, nr, d, S := sc.r, sc.r.nr, sc.r.d, len(sc.sid)
	for p := p0; p < p1; p++ {
		sc.ep.nx = &sc.snx[p*nr]
		r.kern(ptrAt(sc.apack, 0), ptrAt(sc.spack, p*nr*d), d, sc.ep)
		for rr := 0; rr < mr; rr++ {
			for j := 0; j < nr && p*nr+j < S; j++ {
				sc.keys[rr] = append(sc.keys[rr], knnkey.Of(sc.ep.c[rr*nr+j], sc.sid[p*nr+j]))
			}
		}
	}
}
