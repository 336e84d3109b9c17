package metrics

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/knn"
)

// retrievalPlan fixes, for one convention, how neighbour lists are read.
//
// Leave-one-out (one set): strict and pml exclude the query by index; roth
// searches one deeper without exclusion and drops column 0 by position, as
// Roth et al.'s metrics/*.py do (with duplicate rows column 0 may be another
// item and the query itself then counts as a hit — their behaviour).
// Query/gallery: nothing is excluded or dropped in any convention.
type retrievalPlan struct {
	conv    Convention
	loo     bool
	ks      []int
	mapR    bool // a metric of window R (MAP@R, R-Precision, mAP@C) asked
	map1000 bool // a metric of window 1000 (mAP@1000) asked
	// perQuery are the requested metrics scored by Descriptor.PerQuery;
	// ranked: one of them reads positive ranks (Depth PositiveRanks).
	perQuery []Descriptor
	ranked   bool
	// rank1000: the metrics with a long window (mAP@1000 and those of
	// Depth PositiveRanks) read the exact ranks of each query's positives
	// (knn.Watch, up to rankWindow) instead of a search that deep (roth:
	// only mAP@1000, and only when its window is not padded).
	rank1000   bool
	rankWindow int
	// fromRanks: every k-NN metric asked is read from the exact watched
	// ranks (strict, a searcher that ranks exactly, every window within
	// rankWindow): the lists are not read, so the search keeps one
	// neighbour per query and nothing is rechecked.
	fromRanks bool
	extras    planExtras
	depth     int // neighbours searched
	offset    int // leading columns dropped (roth leave-one-out)
	exclude   knn.Exclusion
	gallery   int // gallery size seen by one query
	qLabels   []int32
	gLabels   []int32
	relevant  []int // R_q per dense class: other same-class gallery items
	classSize []int // n_c as Roth uses it: class size incl. the query (LOO) or gallery count (QG)
	// record, when set, receives every scored query's values.
	record *queryRecord
	// recheck, when set (strict), ranks in float64 the queries whose
	// metrics float32 rounding could change.
	recheck *recheck
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

const map1000Window = 1000

// maxWatchPerQuery bounds the mean number of positives per query for which
// mAP@1000 is computed from watched ranks: beyond it (a few huge classes)
// the depth-1000 search is cheaper than ranking every positive.
const maxWatchPerQuery = 256

// newRetrievalPlan fixes the search depth, exclusion and windows for
// scoring the metrics of w on queries qLabels against gallery gLabels
// (dense class ids); canWatch: the backend can report positives' ranks.
func newRetrievalPlan(conv Convention, w want, qLabels, gLabels []int32, classes int, loo, canWatch bool, x planExtras) (*retrievalPlan, error) {
	p := &retrievalPlan{conv: conv, loo: loo, ks: w.ks, qLabels: qLabels, gLabels: gLabels,
		mapR: w.needs(windowR), map1000: w.needs(window1000), perQuery: w.perQuery(), extras: x}
	gc := counts(gLabels, classes)
	p.gallery = len(gLabels)
	p.classSize = gc
	p.relevant = make([]int, classes)
	for c, n := range gc {
		p.relevant[c] = n
		if loo && n > 0 {
			p.relevant[c] = n - 1
		}
	}
	if loo {
		p.gallery--
	}
	for _, k := range p.ks {
		if k > p.gallery {
			return nil, fmt.Errorf("recall k = %d is larger than the gallery each query searches (%d items)", k, p.gallery)
		}
	}
	maxRel := 0
	for i, q := range qLabels {
		if p.scored(i) && p.relevant[q] > maxRel {
			maxRel = p.relevant[q]
		}
	}
	need := 0
	for _, k := range p.ks {
		need = max(need, k)
	}
	for _, d := range p.perQuery {
		switch {
		case d.Depth == PositiveRanks:
			p.ranked = true
			if conv == Roth {
				need = max(need, p.gallery) // roth's watched ranks serve mAP@1000 only
			}
		case d.Depth == AllNeighbours:
			need = max(need, p.gallery)
		case d.Depth > 0:
			need = max(need, min(d.Depth, p.gallery))
		default:
			need = max(need, maxRel)
		}
	}
	if conv == Roth {
		if p.mapR {
			maxN := 0
			for _, q := range qLabels {
				maxN = max(maxN, gc[q])
			}
			need = max(need, maxN, maxRel)
		}
		if loo {
			p.offset = 1
		}
		if p.map1000 {
			// Ranks serve Roth's window too when it is not padded: the
			// search covers ≥ 1000 + offset rows. Every same-class row is
			// watched, the query itself included (nothing is excluded).
			total := 0
			for _, q := range qLabels {
				total += gc[q]
			}
			p.rank1000 = canWatch && len(gLabels) >= map1000Window+p.offset && total <= maxWatchPerQuery*len(qLabels)
			if !p.rank1000 {
				need = max(need, map1000Window)
			}
		}
		p.exclude = knn.ExcludeNone
		p.depth = max(need, 1) + p.offset // may exceed the gallery: padded with id −1 as faiss does
		return p, nil
	}
	if p.mapR {
		need = max(need, p.rWindow(maxRel))
	}
	if p.map1000 {
		p.rankWindow = min(map1000Window, p.gallery)
	}
	if p.ranked {
		p.rankWindow = max(p.rankWindow, p.kWindow())
	}
	if p.rankWindow > 0 {
		total, scoredN := 0, 0
		for i, q := range qLabels {
			if p.scored(i) {
				total += p.relevant[q]
				scoredN++
			}
		}
		// A window beyond 1000 (positive ranks over the whole gallery) is
		// always watched when the backend can: the search it would
		// otherwise need is gallery-deep for every query.
		p.rank1000 = canWatch && (total <= maxWatchPerQuery*scoredN || p.rankWindow > map1000Window)
		if !p.rank1000 {
			need = max(need, p.rankWindow)
		}
	}
	p.depth = min(max(need, 1), p.gallery)
	if loo {
		p.exclude = knn.ExcludeSelf
	}
	if p.rank1000 && conv == Strict && len(p.perQuery) == 0 && (!p.mapR || p.rWindow(maxRel) <= p.rankWindow) &&
		slices.Max(append([]int{0}, p.ks...)) <= p.rankWindow {
		p.fromRanks = true
		p.depth = 1
	}
	if p.rank1000 && loo && len(qLabels)*p.depth > p.budget() {
		// The chunked search (see search) emulates the self-exclusion with
		// a plain search one deeper, under which the watched ranks would
		// count the query itself: use the depth-1000 lists instead (the
		// same mAP@1000, bit for bit; see rankPrecisionSum).
		// The metrics of positive ranks then read lists as deep as their
		// window (the whole gallery unless --pml-k), searched chunk by chunk.
		p.rank1000 = false
		p.depth = max(p.depth, min(p.rankWindow, p.gallery))
	}
	return p, nil
}

// defaultNeighbourBudget bounds the neighbour-list entries (an int32 id and
// a float32 distance each) held at once: 2²² entries, 32 MiB. MAP@R,
// R-Precision and mAP@C search as deep as the largest class, so all lists
// at once would take N × (largest class) entries, quadratic in N when there
// are few classes (20 000 rows in 2 classes: 1.6 GB).
const defaultNeighbourBudget = 1 << 22

// budget is the plan's bound on neighbour-list entries held at once.
func (p *retrievalPlan) budget() int { return cmp.Or(p.extras.budget, defaultNeighbourBudget) }

// chunkRows is the number of queries searched at once: all of them when
// their lists fit the budget, otherwise as many as fit (at least one).
func (p *retrievalPlan) chunkRows(depth int) int {
	n := len(p.qLabels)
	if n*depth <= p.budget() {
		return n
	}
	return max(1, p.budget()/depth)
}

// search runs the plan's k-NN search of q in g and scores it. When the
// neighbour lists of all queries would exceed the budget, queries are
// searched and scored chunk by chunk, so memory stays bounded whatever the
// class sizes. The values are bit-identical to one search: every query's
// list is the same (an exact search ranks each query on its own; a
// self-excluding search is emulated by a search one deeper without
// exclusion from which the query's own row is removed, or the last row when
// the own row is not among them — exactly the rows and order the
// exclusion gives), and the per-query terms are added in the same order
// into the same fixed 2048-query partial sums.
func (p *retrievalPlan) search(ctx context.Context, s knn.Searcher, q, g mat32.Matrix, opt knn.Options, threads int) (map[string]float64, *retrievalSums, error) {
	n := q.Rows
	lo, hi := 0, n
	if p.extras.ranged {
		lo, hi = p.extras.lo, p.extras.hi
	}
	emulate := opt.Exclude == knn.ExcludeSelf && n*p.depth > p.budget()
	// A shard of a leave-one-out search excludes row r0+i from its query
	// i; it searches as the whole would (emulating only where that does),
	// so its lists and watched ranks are the whole search's.
	offset := opt.Exclude == knn.ExcludeSelf && !emulate && p.extras.ranged
	if offset && !knn.SelfOffsets(s) {
		return nil, nil, fmt.Errorf("a shard of a leave-one-out evaluation needs a backend that excludes each query's own row by offset (%s does not; use --backend exact)", s.Name())
	}
	depth := p.depth
	if emulate {
		depth++ // ≤ gallery + 1 = rows of g
		opt.Exclude = knn.ExcludeNone
	}
	// The float64 recheck looks at the candidates just below the list.
	extra := 0
	if p.recheck != nil && !p.fromRanks {
		extra = max(0, min(recheckBand, g.Rows-btoi(opt.Exclude == knn.ExcludeSelf)-depth))
	}
	rows := p.chunkRows(depth + extra)
	if rows >= n && !p.extras.ranged {
		if p.recheck != nil {
			opt.Watch = p.recheck.certify(opt.Watch, 0)
		}
		nb, err := s.Search(ctx, q, g, p.depth+extra, opt)
		if err != nil {
			return nil, nil, err
		}
		if p.recheck != nil && !p.fromRanks {
			p.recheck.apply(nb, 0, p.depth, opt.Watch)
		}
		vals, sums := p.score(nb, threads)
		return vals, sums, nil
	}
	if e, ok := s.(knn.Exact); ok && e.TileQ == 0 {
		// The exact search keeps ~3·depth candidates for every query of
		// a tile in each worker; at this depth its default tile (240 rows
		// at D = 128) would hold more than the lists themselves. Tiles of
		// 48 rows keep each worker's buffers near a tenth of the budget
		// entries at MAP@R depths; the lists do not depend on the tile.
		e.TileQ = max(48, p.budget()/(30*depth))
		s = e
	}
	parts := make([]*retrievalSums, (n+scoreChunk-1)/scoreChunk)
	for c := range parts {
		parts[c] = p.newSums()
	}
	progress := opt.Progress
	watch := opt.Watch
	for r0 := lo; r0 < hi; r0 += rows {
		r1 := min(hi, r0+rows)
		sub := mat32.Matrix{Rows: r1 - r0, Cols: q.Cols, Data: q.Data[r0*q.Cols : r1*q.Cols]}
		if progress != nil {
			base := r0
			opt.Progress = func(done, _ int) { progress(base+done, n) }
		}
		if watch != nil {
			opt.Watch = &knn.Watch{IDs: watch.IDs[r0:r1], MaxRank: watch.MaxRank}
			if p.recheck != nil {
				opt.Watch = p.recheck.certify(opt.Watch, r0)
			}
		}
		if offset {
			opt.SelfRange, opt.SelfOffset = true, r0
		}
		nb, err := s.Search(ctx, sub, g, depth+extra, opt)
		if err != nil {
			return nil, nil, err
		}
		if emulate {
			dropSelf(nb, r0)
		}
		if p.recheck != nil && !p.fromRanks {
			p.recheck.apply(nb, r0, p.depth, opt.Watch)
		}
		// Score the chunk's part of each fixed block; blocks are disjoint.
		first, last := r0/scoreChunk, (r1-1)/scoreChunk
		parallel.For(threads, last-first+1, func(i int) {
			c := first + i
			p.scoreRange(nb, parts[c], max(r0, c*scoreChunk), min(r1, (c+1)*scoreChunk), r0)
		})
	}
	vals, sums := p.merge(parts)
	return vals, sums, nil
}

// dropSelf turns the lists of a search one deeper without exclusion, for
// queries r0, r0+1, … of the database itself, into the lists of the
// self-excluding search: each query's own row is removed, or the last row
// when the own row is not among them. It compacts nb in place (K − 1).
func dropSelf(nb *knn.Neighbors, r0 int) {
	dropOwnRows(nb, func(i int) int32 { return int32(r0 + i) })
}

// retrievalSums accumulates per-query scores.
type retrievalSums struct {
	recall            []float64 // per k
	recallN           int       // denominator of recall
	mapR, rprec, mapC float64
	mapRN, mapCN      int
	map1000           float64
	map1000N          int
	lone              int
	padded            int // roth: queries whose window reached faiss's −1 padding
	// extra, extraN: sums and counts of the plan's perQuery metrics.
	extra  []float64
	extraN []int
	// classes: per-class sums by dense class id (Options.PerClass or
	// per-class averaging), queries: queries scored into these sums.
	classes map[int32]*retrievalSums
	queries int
}

func (p *retrievalPlan) score(nb *knn.Neighbors, threads int) (map[string]float64, *retrievalSums) {
	// Fixed-size chunks merged in order: the sums do not depend on threads.
	parts := make([]*retrievalSums, (nb.N+scoreChunk-1)/scoreChunk)
	parallel.For(threads, len(parts), func(c int) {
		parts[c] = p.newSums()
		p.scoreRange(nb, parts[c], c*scoreChunk, min((c+1)*scoreChunk, nb.N), 0)
	})
	return p.merge(parts)
}

// scoreChunk is the number of queries per partial sum: partial sums are
// merged in order, so the totals depend neither on threads nor on how the
// search was chunked.
const scoreChunk = 2048

// merge adds the partial sums in order and turns them into metric values.
func (p *retrievalPlan) merge(parts []*retrievalSums) (map[string]float64, *retrievalSums) {
	s := p.newSums()
	for _, o := range parts {
		s.add(o)
	}
	return p.values(s), s
}

// values turns accumulated sums into metric values (a mean over no query
// is NaN: undefined).
func (p *retrievalPlan) values(s *retrievalSums) map[string]float64 {
	out := map[string]float64{}
	for i, k := range p.ks {
		out["R@"+strconv.Itoa(k)] = ratio(s.recall[i], s.recallN)
	}
	if p.mapR {
		out["MAP@R"] = ratio(s.mapR, s.mapRN)
		out["R-Precision"] = ratio(s.rprec, s.mapRN)
		out["mAP@C"] = ratio(s.mapC, s.mapCN)
	}
	if p.map1000 {
		out["mAP@1000"] = ratio(s.map1000, s.map1000N)
	}
	for i, d := range p.perQuery {
		out[d.Key] = ratio(s.extra[i], s.extraN[i])
	}
	return out
}

func (p *retrievalPlan) newSums() *retrievalSums {
	return &retrievalSums{recall: make([]float64, len(p.ks)),
		extra: make([]float64, len(p.perQuery)), extraN: make([]int, len(p.perQuery))}
}

// scoreRange scores queries [lo, hi) into s; their lists are rows
// lo−base … hi−1−base of nb.
func (p *retrievalPlan) scoreRange(nb *knn.Neighbors, s *retrievalSums, lo, hi, base int) {
	hits := make([]bool, nb.K)
	var rankBuf []int32 // positive ranks derived from hits (scoreQuery)
	lastLabel := p.gLabels[len(p.gLabels)-1]
	var one *retrievalSums // one query's terms, for per-class sums or per-query values
	if p.extras.perClass || p.record != nil {
		one = p.newSums()
	}
	if p.extras.perClass && s.classes == nil { // a chunked search scores one part in several calls
		s.classes = map[int32]*retrievalSums{}
	}
	for q := lo; q < hi; q++ {
		if !p.scored(q) {
			continue
		}
		y := p.qLabels[q]
		padded := false
		for i, id := range nb.IDsOf(q - base) {
			if id < 0 {
				// faiss pads with −1; numpy's labels[-1] is the last row's label.
				hits[i] = p.conv == Roth && lastLabel == y
				padded = true
				continue
			}
			hits[i] = p.gLabels[id] == y
		}
		rq := p.relevant[y]
		var ranks []int32
		if p.rank1000 {
			ranks = nb.Ranks[q-base]
		}
		if one == nil {
			if rq == 0 {
				s.lone++
			}
			rankBuf = p.scoreQuery(s, hits[p.offset:], ranks, rq, y, padded, rankBuf)
			continue
		}
		// Scored alone, then added: x + (0 + t) = x + t, so the totals are
		// those of direct accumulation.
		one.reset()
		if rq == 0 {
			one.lone++
		}
		rankBuf = p.scoreQuery(one, hits[p.offset:], ranks, rq, y, padded, rankBuf)
		s.add(one)
		if p.record != nil {
			p.record.record(p, q, one)
		}
		if !p.extras.perClass {
			continue
		}
		c := s.classes[y]
		if c == nil {
			c = p.newSums()
			s.classes[y] = c
		}
		c.add(one)
		c.queries++
	}
}

func (s *retrievalSums) add(o *retrievalSums) {
	for i := range s.recall {
		s.recall[i] += o.recall[i]
	}
	s.recallN += o.recallN
	s.mapR += o.mapR
	s.rprec += o.rprec
	s.mapC += o.mapC
	s.mapRN += o.mapRN
	s.mapCN += o.mapCN
	s.map1000 += o.map1000
	s.map1000N += o.map1000N
	s.lone += o.lone
	s.padded += o.padded
	for i := range s.extra {
		s.extra[i] += o.extra[i]
		s.extraN[i] += o.extraN[i]
	}
	s.addClasses(o)
}

// ratio is the mean a/n; a mean over no query is undefined (NaN: null in
// JSON, n/a in tables), as in pytorch-metric-learning.
func ratio(a float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return a / float64(n)
}

// scoreQuery adds one query's contributions; h are its relevance bits in
// rank order (query already excluded or dropped), ranks the ascending ranks
// of its positives within p.rankWindow when p.rankWindow. buf is scratch
// for positive ranks derived from h; it is returned for reuse.
func (p *retrievalPlan) scoreQuery(s *retrievalSums, h []bool, ranks []int32, rq int, y int32, padded bool, buf []int32) []int32 {
	if p.fromRanks {
		p.scoreRanks(s, ranks, rq)
		return buf
	}
	kept := p.conv != PML || rq > 0 // pml drops lone queries from every k-NN metric
	if kept {
		s.recallN++
		first := -1
		for i, v := range h {
			if v {
				first = i
				break
			}
		}
		for i, k := range p.ks {
			if first >= 0 && first < k && (p.conv == Roth || rq > 0) {
				s.recall[i]++
			}
		}
	}
	if p.mapR && rq > 0 {
		// Window min(R_q, k) under pml's explicit k, else R_q; MAP@R divides
		// by R_q, R-Precision by the window (pytorch-metric-learning v2.8.1,
		// mean_average_precision(at_r=True) and r_precision).
		wr := p.rWindow(rq)
		sum, hitsN := precisionSum(h, wr)
		s.mapR += sum / float64(rq)
		s.rprec += float64(hitsN) / float64(wr)
		s.mapRN++
	}
	if p.mapR {
		switch p.conv {
		case Roth:
			// metrics/mAP_c.py: window and divisor n_c (query included), every
			// query. A query/gallery query whose class has no gallery item
			// (n_c = 0; Roth's code has no such case) is left out, not 0/0.
			if nc := p.classSize[y]; nc > 0 {
				sum, _ := precisionSum(h, nc)
				s.mapC += sum / float64(nc)
				s.mapCN++
			}
		default:
			if rq > 0 {
				sum, _ := precisionSum(h, p.rWindow(rq))
				s.mapC += sum / float64(rq)
				s.mapCN++
			}
		}
	}
	if p.map1000 {
		switch p.conv {
		case Roth:
			// metrics/mAP_1000.py: window 1000, divisor n_c, every query.
			if p.classSize[y] == 0 {
				break // query/gallery: no gallery item of the class (see mAP@C)
			}
			var sum float64
			if p.rank1000 {
				sum = rothRankPrecisionSum(ranks, p.offset)
			} else {
				sum, _ = precisionSum(h, map1000Window)
			}
			s.map1000 += sum / float64(p.classSize[y])
			s.map1000N++
			if padded {
				s.padded++
			}
		case PML:
			// pytorch-metric-learning v2.8.1 mean_average_precision with
			// k = 1000: window min(1000, gallery), divisor R_q.
			if rq > 0 {
				var sum float64
				if p.rank1000 {
					sum, _ = rankPrecisionSum(ranksWithin(ranks, min(map1000Window, p.gallery)))
				} else {
					sum, _ = precisionSum(h, min(map1000Window, p.gallery, len(h)))
				}
				s.map1000 += sum / float64(rq)
				s.map1000N++
			}
		default:
			if rq > 0 {
				w := min(map1000Window, p.gallery)
				var sum float64
				if p.rank1000 {
					sum, _ = rankPrecisionSum(ranksWithin(ranks, w))
				} else {
					sum, _ = precisionSum(h, w)
				}
				s.map1000 += sum / float64(min(rq, w))
				s.map1000N++
			}
		}
	}
	var pos []int32
	if p.ranked {
		w := p.kWindow()
		if p.rank1000 && p.conv != Roth {
			pos = ranksWithin(ranks, w)
		} else {
			buf = hitRanks(h, w, buf)
			pos = buf
		}
	}
	for i, d := range p.perQuery {
		if v, ok := d.PerQuery(QueryHits{Hits: h, R: rq, Gallery: p.gallery, Convention: p.conv, Ranks: pos}); ok {
			s.extra[i] += v
			s.extraN[i]++
		}
	}
	return buf
}

// scoreRanks is scoreQuery under fromRanks (strict): every term from the
// ascending exact ranks of the query's positives within rankWindow. Each
// is the term scoreQuery takes from the list's relevance bits, computed
// in the same order (rankPrecisionSum), so the sums are the same bit for
// bit: R@k counts a query whose first positive ranks within k, MAP@R and
// mAP@C add Σ m/rank_m over the ranks within R, R-Precision those ranks'
// count over R, mAP@1000 Σ m/rank_m within its window over min(R, window).
func (p *retrievalPlan) scoreRanks(s *retrievalSums, ranks []int32, rq int) {
	s.recallN++
	for i, k := range p.ks {
		if len(ranks) > 0 && int(ranks[0]) <= k && rq > 0 {
			s.recall[i]++
		}
	}
	if p.mapR && rq > 0 {
		sum, hitsN := rankPrecisionSum(ranksWithin(ranks, rq))
		s.mapR += sum / float64(rq)
		s.rprec += float64(hitsN) / float64(rq)
		s.mapRN++
		s.mapC += sum / float64(rq)
		s.mapCN++
	}
	if p.map1000 && rq > 0 {
		w := min(map1000Window, p.gallery)
		sum, _ := rankPrecisionSum(ranksWithin(ranks, w))
		s.map1000 += sum / float64(min(rq, w))
		s.map1000N++
	}
}

// precisionSum returns Σ_{i≤w} P@i·rel_i over the first w ranks and the
// number of hits among them.
func precisionSum(h []bool, w int) (float64, int) {
	w = min(w, len(h))
	sum, hitsN := 0.0, 0
	for i := 0; i < w; i++ {
		if h[i] {
			hitsN++
			sum += float64(hitsN) / float64(i+1)
		}
	}
	return sum, hitsN
}

// rankPrecisionSum is precisionSum from the ascending 1-based ranks of the
// hits (all within the window): the same terms m/rank_m in the same order,
// so the same float64 result.
func rankPrecisionSum(ranks []int32) (float64, int) {
	sum := 0.0
	for m, r := range ranks {
		sum += float64(m+1) / float64(r)
	}
	return sum, len(ranks)
}

// rothRankPrecisionSum is precisionSum(h, 1000) of the roth plan from the
// ascending ranks (in the search without exclusion, ≤ 1000 + offset) of
// every same-class row: ranks ≤ offset are the dropped leading columns, and
// a row at rank r sits at window position r − offset.
func rothRankPrecisionSum(ranks []int32, offset int) float64 {
	sum, m := 0.0, 0
	for _, r := range ranks {
		if int(r) <= offset {
			continue
		}
		m++
		sum += float64(m) / float64(int(r)-offset)
	}
	return sum
}

// positives is the knn.Watch of every query's same-class gallery items
// (the query itself excluded when the search excludes it), window
// min(1000, gallery), or 1000 + offset for roth.
func (p *retrievalPlan) positives() *knn.Watch {
	members := map[int32][]int32{}
	for j, y := range p.gLabels {
		members[y] = append(members[y], int32(j))
	}
	w := &knn.Watch{MaxRank: p.rankWindow, IDs: make([][]int32, len(p.qLabels))}
	if p.conv == Roth {
		w.MaxRank = map1000Window + p.offset
	}
	for i, y := range p.qLabels {
		if !p.scored(i) {
			continue // not a query (Input.QueryRows): nothing to rank
		}
		m := members[y]
		if p.exclude != knn.ExcludeSelf {
			w.IDs[i] = m
			continue
		}
		ids := make([]int32, 0, max(len(m)-1, 0))
		for _, j := range m {
			if int(j) != i {
				ids = append(ids, j)
			}
		}
		w.IDs[i] = ids
	}
	return w
}
