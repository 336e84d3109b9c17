package clustering

import (
	"context"
	"github.com/dmlbench/dmlbench/internal/exactdist"
	"math"
	"math/bits"

	"github.com/dmlbench/dmlbench/internal/mat32"
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
// any order and association, with or without FMA (and of Σ(x_t − c_t)²,
// which faiss uses below 20 rows: exhaustive_L2sqr_seq), is off from the
// exact D(x, c) = ‖x − c‖² by at most
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
// Cost. A candidate centroid j must have D(x, c_j) ≤ T = D(x, c_a) +
// E(x, c_a) + E(x, c_B), with ‖c_B‖ = min(max‖c‖, ‖x‖ + √(D(x, c_a) +
// E(x, c_a) + E(x, c_max))) bounding the norm of any such centroid. The
// check (nearties_pass.go) reuses the assignment's Yinyang bounds
// (yinyang.go): a group g other than the row's own is a candidate only if
// its bound lb[g]² ≤ T, and the own group only if the bound Yinyang keeps
// on its other members (appendSecond: the group's second-smallest value,
// on one-panel home groups), else the one kept here (sec: the last
// screen's, lowered by the group's largest drift since), is at most √T.
// Candidate groups are screened four rows at a time with the assignment's
// SIMD kernel (nearties_screen.go), and only groups the screen cannot
// exclude are evaluated in float64 (exactdist.L2). Without Yinyang bounds
// (full passes) all centroids form one group. On the realistic 20 000 ×
// 128 set (K = 500) the check costs 6–9 % of the k-means CPU time, on the
// SOP-size 60 502 × 128 set (K = 11 316) about 4 % (docs/metrics.md).
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
	// float32 resolution (tiedRows).
	tie, tieOf []int32 // tieOf[i]: the centroid row i was assigned then
	// passes holds each pass's count (−1: not checked); earlier rows
	// counts the rows of an earlier matrix (the training sample) that
	// some pass decided within rounding.
	passes                   []int
	earlierRows, earlierTies int
	unchecked                bool
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
		t.xnorm[i] = sqNorm64(x.Row(i))
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
func (t *nearTies) flaggedRows() int { return countSet(t.firstHit) }

// tiedRows counts the rows of the current matrix that some pass found
// tied at float32 resolution.
func (t *nearTies) tiedRows() int { return countSet(t.tie) }

// countSet counts the entries ≥ 0.
func countSet(v []int32) int {
	c := 0
	for _, x := range v {
		if x >= 0 {
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

// sqNorm64 is ‖row‖² summed in float64 in index order (each square is
// exact, the sum errs by at most (D − 1)·2⁻⁵³ relatively).
func sqNorm64(row []float32) float64 {
	var s float64
	for _, v := range row {
		s += float64(v) * float64(v)
	}
	return s
}

// roundingBound is E(x, c) for rows of norms a and b in dimension d.
func roundingBound(d int, a, b float64) float64 {
	s := a + b
	g := float64(d+4) * 0x1p-24
	return g*s*s + g*0x1p-144
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
			v, e := exactdist.L2(cent[int(j)*d:int(j+1)*d], t.prev[int(j)*d:int(j+1)*d])
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

// appendSecond appends to m2, for each row of a Yinyang tile, the
// second-smallest kernel value of the group just evaluated (the smallest
// over the lanes other than the row's minimum's, gid) when keep is set —
// a home group of one panel, evaluated whole, so that each lane is one
// centroid; the first pass, which has no home groups, keeps none — and
// −Inf otherwise.
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
