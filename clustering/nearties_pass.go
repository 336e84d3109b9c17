package clustering

import (
	"context"
	"github.com/dmlbench/dmlbench/internal/exactdist"
	"math"
	"math/bits"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// tiePass is what the phases of one check (nearTies.check) share.
type tiePass struct {
	*nearTies
	x, cent      mat32.Matrix
	assign       []int32
	cn           []float64 // centroid norms
	cq           []int32   // dyadicExp of each centroid
	cMax, c2Max  float64   // largest norm, largest squared norm
	lb           []float32 // Yinyang's bounds (nil: none)
	grp          []int32
	ng           int
	tt           []float64 // per row: no centroid farther than √T is within rounding
	screenKernel bool      // the kernel's rounding bound holds (yinyang.go)
}

// tieCand is a group whose bound does not keep row's centroids out of
// reach: screened with the SIMD kernel (screen), then, if the screen does
// not exclude it either, evaluated in float64 (evaluate). direct skips the
// screen.
type tieCand struct {
	row, group int32
	direct     bool
}

// check examines one assignment pass: assign and dist hold the nearest
// centroid of every row of x among the k centroids cent and its float32
// squared distance; ya, when it holds Yinyang bounds for these rows and
// centroids, lends them. It returns the number of rows decided within
// rounding and records them (hit, alt, firstHit, tie).
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
	p.centroidNorms()
	n := x.Rows
	p.tt = make([]float64, n)
	nb := (n + nearTieBlock - 1) / nearTieBlock
	// Phase 1: the groups the bounds do not exclude, in row order.
	parts := make([][]tieCand, nb)
	if err := parallel.Blocks(ctx, threads, nb, func() []uint64 { return make([]uint64, (p.ng+63)/64) }, func(mask []uint64, b int) error {
		for i := b * nearTieBlock; i < min((b+1)*nearTieBlock, n); i++ {
			parts[b] = p.candidates(i, dist[i], mask, parts[b])
		}
		return nil
	}); err != nil {
		return 0, err
	}
	var cands []tieCand
	for _, c := range parts {
		cands = append(cands, c...)
	}
	// Phase 2: the SIMD screen.
	need, err := p.screen(ctx, threads, ya, cands)
	if err != nil {
		return 0, err
	}
	// Phase 3: float64 distances, row by row.
	clear(t.hit)
	var runs []int // start of each row's candidates
	for c := range cands {
		if c == 0 || cands[c].row != cands[c-1].row {
			runs = append(runs, c)
		}
	}
	runs = append(runs, len(cands))
	nr := len(runs) - 1
	hits := make([]int64, (nr+nearTieBlock-1)/nearTieBlock)
	if err := parallel.Blocks(ctx, threads, len(hits), func() []int32 { return make([]int32, 0, p.ng) }, func(groups []int32, b int) error {
		for r := b * nearTieBlock; r < min((b+1)*nearTieBlock, nr); r++ {
			groups = groups[:0]
			for c := runs[r]; c < runs[r+1]; c++ {
				if need[c] {
					groups = append(groups, cands[c].group)
				}
			}
			if len(groups) > 0 && p.evaluate(int(cands[runs[r]].row), groups) {
				hits[b]++
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	total := 0
	for _, h := range hits {
		total += int(h)
	}
	t.prev = append(t.prev[:0], cent...)
	t.passes = append(t.passes, total)
	return total, nil
}

// centroidNorms sets the centroids' norms, dyadic exponents, the largest
// norm and squared norm, and whether the kernel's rounding bound holds.
func (p *tiePass) centroidNorms() {
	k := p.cent.Rows
	p.cn = make([]float64, k)
	p.cq = make([]int32, k)
	for j := range p.cn {
		s := sqNorm64(p.cent.Row(j))
		p.cn[j] = math.Sqrt(s)
		p.cq[j] = dyadicExp(p.cent.Row(j))
		p.cMax = max(p.cMax, p.cn[j])
		p.c2Max = max(p.c2Max, s)
	}
	xMax := 0.0
	for _, v := range p.xnorm {
		xMax = max(xMax, v)
	}
	p.screenKernel = float64(p.d)/(1<<24) <= 0.25 && p.c2Max <= yyNormLimit && xMax <= yyNormLimit
}

// group returns centroid j's group.
func (p *tiePass) group(j int32) int {
	if p.grp == nil {
		return 0
	}
	return int(p.grp[j])
}

// candidates sets row i's T from its float32 distance dist to its
// centroid a (a float32 evaluation of the formula, so D(x, c_a) ≤ dist +
// E(x, c_a)): T = D(x, c_a) + E(x, c_a) + E(x, c_B) bounded above; and
// appends to out the groups whose bound squared is at most T: its own
// (Yinyang's bound, appendSecond, else the one kept in sec) and the others
// (Yinyang's lb, via its mask kernel with √T rounded up, then exactly).
// mask is scratch of a bit per group.
func (p *tiePass) candidates(i int, dist float32, mask []uint64, out []tieCand) []tieCand {
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
	own := p.group(a)
	if p.lb != nil && p.lb[i*p.ng+own] > 0 {
		// Yinyang's pass kept a bound on the own group.
		l := float64(p.lb[i*p.ng+own])
		p.sec[i], p.secFor[i] = l, a
		if l*l <= tt {
			out = append(out, tieCand{int32(i), int32(own), true})
		}
	} else if p.secFor[i] != a || p.sec[i]*p.sec[i] <= tt {
		out = append(out, tieCand{int32(i), int32(own), !p.screenKernel})
	}
	if p.lb == nil {
		return out
	}
	lb := p.lb[i*p.ng : (i+1)*p.ng]
	thr := roundUp32(math.Sqrt(tt) * (1 + 0x1p-40))
	if !anyAtMost(lb[:own], thr) && !anyAtMost(lb[own+1:], thr) {
		return out
	}
	clear(mask)
	lbMask(lb, thr, mask)
	for q, m := range mask {
		for ; m != 0; m &= m - 1 {
			g := q*64 + bits.TrailingZeros64(m)
			if l := float64(lb[g]); g != own && l*l <= tt {
				out = append(out, tieCand{int32(i), int32(g), !p.screenKernel})
			}
		}
	}
	return out
}

// evaluate computes in float64 the distances from row i to the members of
// groups, records whether one is within rounding of its centroid's (and
// tied), and reports whether one is. The own group's evaluation refreshes
// sec.
func (p *tiePass) evaluate(i int, groups []int32) bool {
	d := p.d
	a := p.assign[i]
	xi, ca := p.x.Row(i), p.cent.Row(int(a))
	xn := p.xn[i]
	da, ea := exactdist.L2(xi, ca)
	ba := roundingBound(d, xn, p.cn[a])
	own := p.group(a)
	alt, altD := int32(-1), math.Inf(1)
	tie, tieD := int32(-1), math.Inf(1)
	exactA := p.exactPair(i, a)
	sa := xn + p.cn[a]
	for _, g := range groups {
		sec := math.Inf(1)
		for _, j := range p.members[g] {
			if j == a {
				continue
			}
			cj := p.cent.Row(int(j))
			dj, ej := exactdist.L2(xi, cj)
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
		if int(g) == own {
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
	return alt >= 0
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

// anyAtMost reports whether some v[g] ≤ thr (four comparisons a step: the
// common answer is no, for every group).
func anyAtMost(v []float32, thr float32) bool {
	g := 0
	for ; g+4 <= len(v); g += 4 {
		if v[g] <= thr || v[g+1] <= thr || v[g+2] <= thr || v[g+3] <= thr {
			return true
		}
	}
	for ; g < len(v); g++ {
		if v[g] <= thr {
			return true
		}
	}
	return false
}
