package clustering

import (
	"context"
	"math"
	"math/bits"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// Near-tie detection for KMeans: which assignments float32 rounding, in
// some summation order, could have decided.
//
// faiss 1.7.3's k-means assigns with IndexFlatL2::search, k = 1:
// knn_L2sqr → exhaustive_L2sqr_blas (faiss/utils/distances.cpp) computes
// the inner products with BLAS sgemm, the norms with fvec_norms_L2sqr,
// then dis = x_norms[i] + y_norms[j] − 2·ip in float32, clamped at 0, and
// keeps the first smallest (SingleBestResultHandler::add_results,
// faiss/impl/ResultHandler.h: strict CMax::cmp, so ties go to the lower
// index). The summation order of sgemm is its BLAS kernel's: OpenBLAS
// picks it by CPU (OPENBLAS_CORETYPE), and on the 1-ulp data of
// nearties_test.go faiss 1.7.3 itself gives 106 of 800 final assignments
// differently under its Haswell and SkylakeX kernels and 222 under
// Prescott's, and sends rows to both of two bitwise-equal centroids
// (testdata/faiss_duplicates.json, case s0: 16 of 140 rows to the higher
// index). No fixed order reproduces faiss everywhere, so KMeans keeps its
// own (one FMA chain) and says where the order could matter.
//
// Every float32 evaluation of ‖x‖² + ‖c‖² − 2⟨x, c⟩ over D dimensions, in
// any order and association, with or without FMA, is off from the exact
// D(x, c) = ‖x − c‖² by at most
//
//	E(x, c) = (D + 4)·2⁻²⁴·(‖x‖ + ‖c‖)² + (D + 4)·2⁻¹⁴⁴
//
// (docs/backends.md; Higham 2002 §3.1: γ_D bounds a sum of D terms in any
// order, the second term underflow), and exactly 0 when every coordinate
// of x and c is a multiple of 2^q and (‖x‖ + ‖c‖)² < 2^(24+2q): then every
// product and partial sum is a float32 (exactPair). A row x assigned to
// centroid a was assigned within rounding when some other centroid j has
//
//	D(x, c_j) − D(x, c_a) ≤ E(x, c_a) + E(x, c_j)
//
// (bitwise-equal centroids included: faiss's sgemm need not give them
// equal values); then an evaluation in another order may rank j first and
// faiss's k-means may give the row to j. Otherwise every float32
// evaluation ranks a first. The verdict is on exact distances, so the rows
// found depend only on x, the centroids and the assignment — not on the
// pruning, the thread count or the kernel level. A row is moreover tied
// when the difference is at most 2⁻²³·((‖x‖ + ‖c_a‖)² + (‖x‖ + ‖c_j‖)²):
// within the rounding of the formula's last two operations, which differ
// between faiss's association, (‖x‖² + ‖c‖²) − 2⟨x, c⟩, and KMeans's,
// ‖x‖² + (‖c‖² − 2⟨x, c⟩), whatever the summation order: such decisions
// part often (all 560 of the 1-ulp data), the others rarely (none of 77 on
// the realistic 20 000-row set, where faiss's assignment is KMeans's).
//
// Cost. Distances are computed in float64 (rowDist64) only for candidate
// centroids. A candidate j must have D(x, c_j) ≤ T = D(x, c_a) + E(x, c_a)
// + E(x, c_B), with ‖c_B‖ = min(max‖c‖, ‖x‖ + √(D(x, c_a) + E(x, c_a) +
// E(x, c_max))) bounding the norm of any such centroid. Candidates are
// pruned by two rigorous lower bounds on distances: Yinyang's per-group
// bounds (yinyang.go, lb: every centroid of group g other than the
// assigned one is at least lb[g] away) for the groups other than the
// assigned centroid's, and, for the assigned centroid's own group, a bound
// kept here on its nearest other member, refreshed with the assignment's
// SIMD kernel when it no longer proves the row (screenOwn) and lowered
// after each update by the group's largest centroid drift (Hamerly's
// bound, per group). Without Yinyang bounds (full passes) all centroids
// form one group. Only rows whose margin is within a few rounding bounds
// reach the float64 distances.
type nearTies struct {
	n, k, d int
	x0      *float32  // the rows the per-row state belongs to
	xnorm   []float64 // ‖x_i‖²
	xn      []float64 // ‖x_i‖
	xq      []int32   // dyadicExp of each row
	grp     []int32   // the grouping the bounds hold for (nil: one group)
	members [][]int32 // centroids of each group
	prev    []float32 // centroids of the previous check
	// sec[i] ≤ ‖x_i − c_j‖ for every j ≠ secFor[i] in secFor[i]'s group;
	// kept while row i stays assigned to secFor[i].
	sec    []float64
	secFor []int32
	// Outcome per row: hit[i] says whether the current pass decided row i
	// within rounding, alt[i] is then the nearest such other centroid,
	// firstHit[i] the first pass that did (−1: none).
	alt      []int32
	hit      []bool
	firstHit []int32
	// tie[i] ≥ 0: in some pass row i's distance to centroid tie[i] was
	// within 2⁻²³·((‖x‖ + ‖c_a‖)² + (‖x‖ + ‖c_j‖)²) of its own: a tie at
	// float32 resolution (see tieRows).
	tie, tieOf []int32 // tieOf[i]: the centroid row i was assigned then
	// passes holds each pass's count (−1: not checked); earlier rows
	// counts the rows of an earlier matrix (the training sample) that
	// some pass decided within rounding.
	passes                   []int
	earlierRows, earlierTies int
	unchecked                bool
	// evals counts the distances evaluated.
	evals int64
}

// nearTieBlock is the number of rows of one work item.
const nearTieBlock = 256

// reset prepares the state for the rows of x.
func (t *nearTies) reset(x mat32.Matrix, k int) {
	n, d := x.Rows, x.Cols
	t.earlierRows, t.earlierTies = t.flaggedRows(), t.tiedRows()
	t.n, t.k, t.d, t.x0 = n, k, d, &x.Data[0]
	t.xnorm = make([]float64, n)
	for i := range t.xnorm {
		var s float64
		for _, v := range x.Row(i) {
			s += float64(v) * float64(v)
		}
		t.xnorm[i] = s
	}
	t.xn = make([]float64, n)
	for i, v := range t.xnorm {
		t.xn[i] = math.Sqrt(v)
	}
	t.xq = make([]int32, n)
	for i := range t.xq {
		t.xq[i] = dyadicExp(x.Row(i))
	}
	t.sec = make([]float64, n)
	t.secFor = make([]int32, n)
	t.alt = make([]int32, n)
	t.firstHit = make([]int32, n)
	t.tie = make([]int32, n)
	t.tieOf = make([]int32, n)
	for i := range t.secFor {
		t.secFor[i], t.alt[i], t.firstHit[i], t.tie[i] = -1, -1, -1, -1
	}
	t.hit = make([]bool, n)
	t.grp, t.members, t.prev = nil, nil, nil
}

// flaggedRows counts the rows of the current matrix that some pass
// decided within rounding.
func (t *nearTies) flaggedRows() int {
	c := 0
	for _, p := range t.firstHit {
		if p >= 0 {
			c++
		}
	}
	return c
}

// tiedRows counts the rows of the current matrix that some pass found
// tied at float32 resolution.
func (t *nearTies) tiedRows() int {
	c := 0
	for _, j := range t.tie {
		if j >= 0 {
			c++
		}
	}
	return c
}

// note checks one assignment pass of KMeans. Assignments made by a
// Searcher or an Assigner are not checked (their arithmetic is not this
// package's; RoundingRows −1).
func (t *nearTies) note(ctx context.Context, x mat32.Matrix, cent []float32, k int, assign []int32, dist []float32, ya *yinyangAssigner, opt KMeansOptions) error {
	if opt.Searcher != nil || opt.Assigner != nil {
		t.unchecked = true
		t.passes = append(t.passes, -1)
		return nil
	}
	_, err := t.check(ctx, x, cent, k, assign, dist, ya, opt.Threads)
	return err
}

// report sets res's rounding fields after KMeans's last pass (the final
// assignment of all rows, whose rows are the last matrix checked).
func (t *nearTies) report(res *KMeansResult) {
	res.RoundingPasses = t.passes
	if t.unchecked {
		res.RoundingRows, res.TiedRows = -1, -1
		return
	}
	res.RoundingRows = t.earlierRows + t.flaggedRows()
	res.TiedRows = t.earlierTies + t.tiedRows()
	if t.tiedRows() > 0 {
		res.TiedPairs = make([][2]int32, t.n)
		for i, j := range t.tie {
			res.TiedPairs[i] = [2]int32{t.tieOf[i], j}
		}
	}
}

// roundingBound is E(x, c) for rows of norms a and b in dimension d.
func roundingBound(d int, a, b float64) float64 {
	s := a + b
	g := float64(d+4) * 0x1p-24
	return g*s*s + g*0x1p-144
}

// rowDist64 returns ‖x − c‖² in float64 (four partial sums) and a bound on
// its error: each difference and square rounds with relative error at most
// 2⁻⁵³ and the sum of non-negative terms in any order adds γ_D, so the
// error is at most (D + 3)·2⁻⁵²·v (exactdist.L2's bound, which does not
// depend on the order).
func rowDist64(x, c []float32) (v, err float64) {
	c = c[:len(x)]
	var s0, s1, s2, s3 float64
	t := 0
	for ; t+4 <= len(x); t += 4 {
		e0 := float64(x[t]) - float64(c[t])
		e1 := float64(x[t+1]) - float64(c[t+1])
		e2 := float64(x[t+2]) - float64(c[t+2])
		e3 := float64(x[t+3]) - float64(c[t+3])
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
	}
	for ; t < len(x); t++ {
		e := float64(x[t]) - float64(c[t])
		s0 += e * e
	}
	v = (s0 + s1) + (s2 + s3)
	return v, float64(len(x)+3) * 0x1p-52 * v
}

// Row states of one check.
const (
	tieScreen = 1 << iota // the own group's bound is too low: screen it (SIMD)
	tieOwn                // evaluate the own group in float64
	tieOther              // some other group's bound is too low
)

// tiePass is what one check's phases share.
type tiePass struct {
	*nearTies
	x            mat32.Matrix
	cent         mat32.Matrix
	assign       []int32
	cn           []float64 // centroid norms
	cq           []int32   // dyadicExp of each centroid
	cMax, c2Max  float64   // largest norm, largest squared norm
	lb           []float32 // Yinyang's bounds (nil: none)
	grp          []int32
	ng           int
	tt           []float64 // T per row: no centroid farther is within rounding
	state        []uint8
	hits, evals  []int64 // per work item
	screenKernel bool    // the kernel's rounding bound holds (yinyang.go)
}

// check examines one assignment pass: assign and dist hold the nearest
// centroid of every row of x among the k centroids cent and its float32
// squared distance; ya, when it holds Yinyang bounds for these rows and
// centroids, lends them. It returns the number of rows decided within
// rounding and records them (hit, alt, firstHit).
func (t *nearTies) check(ctx context.Context, x mat32.Matrix, cent []float32, k int, assign []int32, dist []float32, ya *yinyangAssigner, threads int) (int, error) {
	if x.Rows == 0 || k < 2 {
		t.passes = append(t.passes, 0)
		return 0, nil
	}
	if t.x0 != &x.Data[0] || t.n != x.Rows || t.k != k || t.d != x.Cols {
		t.reset(x, k)
	}
	p := &tiePass{nearTies: t, x: x, cent: mat32.Matrix{Rows: k, Cols: t.d, Data: cent}, assign: assign, ng: 1}
	if ya != nil && ya.lb != nil && ya.x0 == &x.Data[0] && ya.n == x.Rows && ya.k == k && ya.d == x.Cols {
		p.lb, p.grp, p.ng = ya.lb, ya.grp, ya.ng
	}
	if len(t.passes) > 0 && sameBits(cent, t.prev) && sameGrouping(p.grp, t.grp) {
		// Lloyd's fixed point: the centroids, hence the assignment, are
		// the previous pass's, and so are the rows within rounding.
		c := t.passes[len(t.passes)-1]
		t.passes = append(t.passes, c)
		return c, nil
	}
	t.groupDrifts(cent, p.grp, p.ng)
	p.cn = make([]float64, k)
	p.cq = make([]int32, k)
	for j := range p.cn {
		var s float64
		for _, v := range p.cent.Row(j) {
			s += float64(v) * float64(v)
		}
		p.cn[j] = math.Sqrt(s)
		p.cq[j] = dyadicExp(p.cent.Row(j))
		p.cMax = max(p.cMax, p.cn[j])
		p.c2Max = max(p.c2Max, s)
	}
	xMax := 0.0
	for _, v := range t.xnorm {
		xMax = max(xMax, v)
	}
	p.screenKernel = float64(t.d)/(1<<24) <= 0.25 && p.c2Max <= yyNormLimit && xMax <= yyNormLimit
	n := x.Rows
	p.tt = make([]float64, n)
	p.state = make([]uint8, n)
	nb := (n + nearTieBlock - 1) / nearTieBlock
	p.hits, p.evals = make([]int64, nb), make([]int64, nb)
	// Phase 1: which rows the bounds do not settle.
	if err := parallel.Blocks(ctx, threads, nb, func() []uint64 { return make([]uint64, (p.ng+63)/64) }, func(mask []uint64, b int) error {
		for i := b * nearTieBlock; i < min((b+1)*nearTieBlock, n); i++ {
			p.settle(i, dist[i], mask)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	// Phase 2: SIMD screen of the own groups.
	if err := p.screenOwn(ctx, threads, ya); err != nil {
		return 0, err
	}
	// Phase 3: float64 distances to the remaining candidates.
	if err := parallel.Blocks(ctx, threads, nb, func() []bool { return make([]bool, p.ng) }, func(want []bool, b int) error {
		for i := b * nearTieBlock; i < min((b+1)*nearTieBlock, n); i++ {
			if p.state[i]&(tieOwn|tieOther) != 0 {
				ev, hit := p.evaluate(i, want)
				p.evals[b] += ev
				if hit {
					p.hits[b]++
				}
			} else {
				t.hit[i] = false
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	total := 0
	for b := range p.hits {
		t.evals += p.evals[b]
		total += int(p.hits[b])
	}
	t.prev = append(t.prev[:0], cent...)
	t.passes = append(t.passes, total)
	return total, nil
}

// group returns centroid j's group.
func (p *tiePass) group(j int32) int {
	if p.grp == nil {
		return 0
	}
	return int(p.grp[j])
}

// settle sets row i's T and state (mask: scratch of a bit per group) from its float32 distance dist to its
// centroid a (a float32 evaluation of the formula, so D(x, c_a) ≤ dist +
// E(x, c_a)) and the bounds: T = D(x, c_a) + E(x, c_a) + E(x, c_B) bounded
// above; a group is a candidate when its bound squared is at most T.
func (p *tiePass) settle(i int, dist float32, mask []uint64) {
	d := p.d
	a := p.assign[i]
	xn := p.xn[i]
	ba := roundingBound(d, xn, p.cn[a])
	up := float64(dist) + ba // ≥ D(x, c_a)
	cB := min(p.cMax, xn+math.Sqrt(up+ba+roundingBound(d, xn, p.cMax)))
	// Relative spare for the float64 roundings of T and of the bounds
	// squared.
	tt := (up + ba + roundingBound(d, xn, cB)) * (1 + 0x1p-40)
	p.tt[i] = tt
	var st uint8
	own := p.group(a)
	if l := p.ownBound(i, own); l > 0 {
		// Yinyang's pass kept a bound on the own group (appendSecond).
		if l*l <= tt {
			st = tieOwn
		}
		p.sec[i], p.secFor[i] = l, a
	} else if p.secFor[i] != a || p.sec[i]*p.sec[i] <= tt {
		st = tieScreen
		if !p.screenKernel {
			st = tieOwn
		}
	}
	if p.lb != nil {
		// Yinyang's mask kernel marks every group with lb ≤ √T (a
		// superset: τ is rounded up); evaluate decides exactly.
		clear(mask)
		lbMask(p.lb[i*p.ng:(i+1)*p.ng], roundUp32(math.Sqrt(tt)*(1+0x1p-40)), mask)
		mask[own>>6] &^= 1 << (own & 63)
		for _, m := range mask {
			if m != 0 {
				st |= tieOther
				break
			}
		}
	}
	p.state[i] = st
}

// ownBound returns Yinyang's bound on the distance from row i to the
// members of its own group g other than its centroid (ownGroupBound), 0
// when none.
func (p *tiePass) ownBound(i, g int) float64 {
	if p.lb == nil {
		return 0
	}
	return float64(p.lb[i*p.ng+g])
}

// evaluate computes in float64 the distances from row i to the members of
// its candidate groups (own group when marked, the others whose bound
// squared is at most T), records whether one is within rounding of its
// centroid's, and returns the distances evaluated.
func (p *tiePass) evaluate(i int, want []bool) (int64, bool) {
	d := p.d
	a := p.assign[i]
	xi, ca := p.x.Row(i), p.cent.Row(int(a))
	xn := p.xn[i]
	da, ea := rowDist64(xi, ca)
	ba := roundingBound(d, xn, p.cn[a])
	own := p.group(a)
	clear(want)
	want[own] = p.state[i]&tieOwn != 0
	if p.state[i]&tieOther != 0 {
		for g, l := range p.lb[i*p.ng : (i+1)*p.ng] {
			if g != own && float64(l)*float64(l) <= p.tt[i] {
				want[g] = true
			}
		}
	}
	var evals int64
	alt, altD := int32(-1), math.Inf(1)
	tie, tieD := int32(-1), math.Inf(1)
	exactA := p.exactPair(i, a)
	sa := xn + p.cn[a]
	for g, w := range want {
		if !w {
			continue
		}
		sec := math.Inf(1)
		for _, j := range p.members[g] {
			if j == a {
				continue
			}
			cj := p.cent.Row(int(j))
			dj, ej := rowDist64(xi, cj)
			evals++
			sec = min(sec, dj-ej)
			gap := dj - ej - (da + ea)
			if gap > ba+roundingBound(d, xn, p.cn[j]) || exactA && p.exactPair(i, j) {
				continue
			}
			if dj < altD {
				alt, altD = j, dj
			}
			if sj := xn + p.cn[j]; gap <= 0x1p-23*(sa*sa+sj*sj) && dj < tieD {
				tie, tieD = j, dj
			}
		}
		if g == own {
			p.sec[i] = math.Sqrt(max(0, sec)) * (1 - 0x1p-40)
			p.secFor[i] = a
		}
	}
	p.hit[i] = alt >= 0
	if tie >= 0 {
		p.tie[i], p.tieOf[i] = tie, a
	}
	if alt >= 0 {
		p.alt[i] = alt
		if p.firstHit[i] < 0 {
			p.firstHit[i] = int32(len(p.passes))
		}
	}
	return evals, alt >= 0
}

// screenOwn bounds, for every row marked tieScreen, the distance to the
// nearest other member of its centroid's group with the assignment's own
// SIMD kernel (boundsRows: kernel values v = ‖c‖² − 2⟨x, c⟩ in float32,
// off by at most yinyang.go's e = κ·(‖x‖² + 2·max‖c‖²) + 10⁻³⁰), rows of
// one group four at a time, the lanes of the tile's centroids masked
// (norm +Inf) and the tile's other rows' centroids evaluated in float64.
// The bound becomes sec; a row whose bound squared is still at most T is
// marked for the float64 evaluation.
func (p *tiePass) screenOwn(ctx context.Context, threads int, ya *yinyangAssigner) error {
	var rows []int32
	for i, st := range p.state {
		if st&tieScreen != 0 {
			rows = append(rows, int32(i))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if len(rows) < 2*p.ng {
		// Packing the K centroids would cost more than the float64
		// distances of these few rows to their groups (K/G each).
		for _, i := range rows {
			p.state[i] |= tieOwn
		}
		return nil
	}
	// Panels per group: Yinyang's packing in group order, or all
	// centroids in index order as one group.
	var pk *centroidPack
	var ids, gp []int32
	if p.grp != nil {
		pk, ids, gp = ya.packGroups(p.cent.Data), ya.ids, ya.gp
	} else {
		k := p.cent.Rows
		pk = packCentroids(p.cent.Data, k, p.d)
		np := (k + tileCols - 1) / tileCols
		ids = make([]int32, np*tileCols)
		for j := range ids {
			ids[j] = int32(j)
			if j >= k {
				ids[j] = math.MaxInt32
			}
		}
		gp = []int32{0, int32(np)}
	}
	// Rows by group, then by centroid (counting sort): a tile's rows
	// share their group and mostly their centroid.
	rank := make([]int32, p.cent.Rows+1)
	r := int32(0)
	for _, mem := range p.members {
		for _, j := range mem {
			rank[j] = r
			r++
		}
	}
	start := make([]int32, p.cent.Rows+1)
	for _, i := range rows {
		start[rank[p.assign[i]]+1]++
	}
	for j := 1; j < len(start); j++ {
		start[j] += start[j-1]
	}
	sorted := make([]int32, len(rows))
	for _, i := range rows {
		q := rank[p.assign[i]]
		sorted[start[q]] = i
		start[q]++
	}
	rows = sorted
	var tiles [][2]int // [start, end) in rows, one group each
	for s := 0; s < len(rows); {
		g := p.group(p.assign[rows[s]])
		e := s + 1
		for e < len(rows) && e-s < tileRows && p.group(p.assign[rows[e]]) == g {
			e++
		}
		tiles = append(tiles, [2]int{s, e})
		s = e
	}
	kappa := 2 * float64(p.d+2) / (1 << 24) * (1 + 1.0/(1<<10))
	c2 := p.c2Max * (1 + 1.0/(1<<20))
	return parallel.Blocks(ctx, threads, len(tiles), newTileScratch, func(sc *tileScratch, b int) error {
		p.screenTile(rows[tiles[b][0]:tiles[b][1]], pk, ids, gp, kappa, c2, sc)
		return nil
	})
}

// tileScratch is one screening worker's scratch.
type tileScratch struct {
	best [tileRows * tileCols]float32
	bidx [tileRows * tileCols]int32
	norm [tileCols]float32
	out  [tileRows]float32
	oid  [tileRows]int32
}

func newTileScratch() *tileScratch { return &tileScratch{} }

// screenTile screens one tile of at most four rows of one group.
func (p *tiePass) screenTile(rows []int32, pk *centroidPack, ids, gp []int32, kappa, c2 float64, sc *tileScratch) {
	d := p.d
	g := p.group(p.assign[rows[0]])
	var xr [tileRows][]float32
	for r := range xr {
		xr[r] = p.x.Row(int(rows[min(r, len(rows)-1)]))
	}
	inf := float32(math.Inf(1))
	for l := range sc.best {
		sc.best[l], sc.bidx[l] = inf, math.MaxInt32
	}
	for q := gp[g]; q < gp[g+1]; q++ {
		pid := ids[int(q)*tileCols : int(q+1)*tileCols]
		copy(sc.norm[:], pk.norms[int(q)*tileCols:int(q+1)*tileCols])
		for l, j := range pid {
			for _, i := range rows {
				if j == p.assign[i] {
					sc.norm[l] = inf
				}
			}
		}
		boundsRows(xr[0], xr[1], xr[2], xr[3], pk.panels[int(q)*d*tileCols:], sc.norm[:], pid, sc.best[:], sc.bidx[:], d)
	}
	groupArgmin(sc.best[:], sc.bidx[:], &sc.out, &sc.oid)
	for r, i := range rows {
		x2 := p.xnorm[i]
		e := kappa*(x2+2*c2) + 1e-30
		low := x2 + float64(sc.out[r]) - e
		for _, o := range rows {
			if a := p.assign[o]; a != p.assign[i] {
				dj, ej := rowDist64(p.x.Row(int(i)), p.cent.Row(int(a)))
				low = min(low, dj-ej)
			}
		}
		// 1 − 2⁻²⁰ absorbs the float64 roundings (as yinyang.go's store).
		p.sec[i] = math.Sqrt(max(0, low)) * (1 - 1.0/(1<<20))
		p.secFor[i] = p.assign[i]
		if p.sec[i]*p.sec[i] <= p.tt[i] {
			p.state[i] |= tieOwn
		}
	}
}

// sameGrouping reports whether a and b are the same grouping (the same
// slice, or both none).
func sameGrouping(a, b []int32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return &a[0] == &b[0] && len(a) == len(b)
}

// groupDrifts lowers every row's sec by the largest distance a centroid of
// its group moved since the previous check (rounded up). A new grouping
// rebuilds the members and forgets sec.
func (t *nearTies) groupDrifts(cent []float32, grp []int32, ng int) {
	d, k := t.d, t.k
	if !sameGrouping(grp, t.grp) || t.members == nil || len(t.prev) != len(cent) {
		t.grp = grp
		t.members = make([][]int32, ng)
		for j := 0; j < k; j++ {
			g := 0
			if grp != nil {
				g = int(grp[j])
			}
			t.members[g] = append(t.members[g], int32(j))
		}
		for i := range t.secFor {
			t.secFor[i] = -1
		}
		return
	}
	gdrift := make([]float64, ng)
	for g, mem := range t.members {
		var m float64
		for _, j := range mem {
			v, e := rowDist64(cent[int(j)*d:int(j+1)*d], t.prev[int(j)*d:int(j+1)*d])
			m = max(m, v+e)
		}
		gdrift[g] = math.Sqrt(m) * (1 + 0x1p-30)
	}
	for i, a := range t.secFor {
		if a >= 0 {
			g := 0
			if grp != nil {
				g = int(grp[a])
			}
			t.sec[i] = max(0, (t.sec[i]-gdrift[g])*(1-0x1p-40))
		}
	}
}

// dyadicExp returns the largest q with every coordinate of row an integer
// multiple of 2^q (1000 for a zero row).
func dyadicExp(row []float32) int32 {
	q := int32(1000)
	for _, v := range row {
		if v == 0 {
			continue
		}
		b := math.Float32bits(v)
		e := int32(b>>23) & 0xff
		m := b & (1<<23 - 1)
		if e == 0 {
			e = 1 // subnormal: no implicit bit, exponent of 2⁻¹⁴⁹
		} else {
			m |= 1 << 23
		}
		q = min(q, e-150+int32(bits.TrailingZeros32(m)))
	}
	return q
}

// exactPair reports whether every float32 evaluation of ‖x‖² + ‖c‖² −
// 2⟨x, c⟩ for row i and centroid j is exact, in any order: all
// coordinates are multiples of 2^q, so every product, norm and partial sum
// is a multiple of 2^2q, and none exceeds (‖x‖ + ‖c‖)² < 2^(24+2q) (nor is
// 2q below float32's 2⁻¹⁴⁹), so each is a float32. Then E is 0: both sides
// compute the exact distance, and an exact tie goes to the lower index in
// both.
func (p *tiePass) exactPair(i int, j int32) bool {
	q := min(p.xq[i], p.cq[j])
	if q < -74 || q > 200 {
		return false
	}
	s := p.xn[i] + p.cn[j]
	return s*s*(1+0x1p-40) < math.Ldexp(1, 24+2*int(q))
}

// appendSecond appends to m2, for each row of a Yinyang tile, the
// second-smallest kernel value of the group just evaluated (the smallest
// over the lanes other than the row's minimum's, gid) when keep is set —
// a group of one panel, evaluated whole, so that each lane is one
// centroid — and −Inf otherwise.
func appendSecond(m2, best []float32, bidx []int32, gid *[tileRows]int32, keep bool) []float32 {
	for r := 0; r < tileRows; r++ {
		v := float32(math.Inf(-1))
		if keep {
			v = float32(math.Inf(1))
			for l := r * tileCols; l < (r+1)*tileCols; l++ {
				if bidx[l] != gid[r] {
					v = min(v, best[l])
				}
			}
		}
		m2 = append(m2, v)
	}
	return m2
}

// ownGroupBound is the lower bound Yinyang keeps for a row's own group:
// with v2 the second-smallest kernel value of the group (appendSecond),
// every member other than the row's centroid is at least √(‖x‖² + v2 − e)
// away (yinyang.go's rounding margin e; stored rounded down, as every
// bound), which lets nearties.go skip the group; 0 (always valid) when v2
// was not kept.
func ownGroupBound(v2 float32, x2, e float64) float32 {
	if math.IsInf(float64(v2), -1) {
		return 0
	}
	return float32(math.Sqrt(max(0, x2+float64(v2)-e)) * (1 - 1.0/(1<<20)))
}
