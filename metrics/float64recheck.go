package metrics

import (
	"math"
	"slices"

	"github.com/dmlbench/dmlbench/internal/exactdist"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// f32Unit is float32's unit roundoff u = 2⁻²⁴; f32Tiny·u = 2⁻¹⁴⁴ bounds,
// per term, the absolute error that products rounded in float32's
// subnormal range add (see recheck).
const (
	f32Unit = 0x1p-24
	f32Tiny = 0x1p-120
)

// recheck certifies, under strict, that float32 rounding cannot change a
// metric of a query, and ranks the queries it cannot certify again
// exactly (internal/exactdist: float64 with an error bound, near-ties in
// integer arithmetic; ties to the lower index).
//
// The kernels compute ‖x‖² + ‖c‖² − 2⟨x, c⟩ (or ⟨x, c⟩) in float32; with
// D-term sums each rounding with u = 2⁻²⁴ the result is off by at most
//
//	e(x, c) = (D + 4)·u·(‖x‖ + ‖c‖)² + (D + 4)·2⁻¹⁴⁴
//
// The first term is Higham (2002, §3.1) applied to the three sums (each
// term at most γ_{D+1} off relative to the sum of the magnitudes, and
// ‖x‖² + ‖c‖² + 2|⟨x, c⟩| ≤ (‖x‖ + ‖c‖)², plus the final two roundings).
// The second covers underflow: a product rounded in the subnormal range
// errs by at most 2⁻¹⁵⁰ absolutely (additions there are exact), the three
// sums hold at most 4D products counting the factor 2 of the cross term,
// so underflow adds at most 4D·2⁻¹⁵⁰·(1 + γ_D) ≤ (D + 4)·2⁻¹⁴⁴.
// Cosine searches rows normalised in float32 (x̂ = fl(x/‖x‖)); each
// coordinate is then off by at most ε = u + (D + 4)·2⁻⁵³ relatively plus
// 2⁻¹⁵⁰, so ⟨x̂, ĉ⟩ is off from the cosine of the input rows by at most
// 2ε + ε² + 2⁻¹⁴⁸·√D more (Cauchy–Schwarz), added to e.
//
// Two candidates can swap only when their float32
// distances are within e of each other, and a swap changes a retrieval
// metric only when the two differ in relevance and one lies inside a
// window the metrics read (the R@k cut-offs, R, the class size). A query
// is certified when no such pair lies within the bound, including the
// candidate just below the list (the search runs one deeper for it) and,
// through it, every candidate beyond: those rank behind it, and a row
// that could overtake a window item has ‖c‖ ≤ ‖x‖ + √(d + e). An
// uncertain query is reordered exactly within its list when no row
// below the list can enter it, else ranked again against the whole
// gallery.
type recheck struct {
	metric knn.Metric
	q, g   mat32.Matrix
	loo    bool
	qn, gn []float64 // row norms
	gMax   float64
	gamma  float64
	extra  float64 // cosine: the normalisation's error (see recheck)
	// kind and rq, rg are the exact reference: the input rows, before
	// any normalisation.
	kind   exactdist.Kind
	rq, rg mat32.Matrix
	plan   *retrievalPlan
	full   bool // a metric reads the whole list: windows end at the depth
	// Rechecked counts the queries ranked again exactly against the
	// whole gallery, Reordered those reordered within their list.
	Rechecked, Reordered int
}

func newRecheck(p *retrievalPlan, metric knn.Metric, q, g mat32.Matrix) *recheck {
	r := &recheck{metric: metric, q: q, g: g, loo: p.loo, plan: p, gamma: float64(q.Cols+4) * f32Unit,
		kind: exactdist.SquaredL2, rq: q, rg: g}
	if metric == knn.IP {
		r.kind = exactdist.InnerProduct
	}
	r.qn = rowNorms(q)
	r.gn = r.qn
	if !p.loo {
		r.gn = rowNorms(g)
	}
	for _, v := range r.gn {
		r.gMax = max(r.gMax, v)
	}
	for _, d := range p.perQuery {
		if d.Depth != 0 {
			r.full = true
		}
	}
	return r
}

// cosine makes the exact reference the cosine of the input rows q, g
// (before the normalisation the search used; see recheck).
func (r *recheck) cosine(q, g mat32.Matrix) {
	r.kind, r.rq, r.rg = exactdist.Cosine, q, g
	eps := f32Unit + float64(q.Cols+4)*0x1p-53
	r.extra = 2*eps + eps*eps + math.Sqrt(float64(q.Cols))*0x1p-148
}

func rowNorms(m mat32.Matrix) []float64 {
	out := make([]float64, m.Rows)
	for i := range out {
		var s float64
		for _, v := range m.Row(i) {
			s += float64(v) * float64(v)
		}
		out[i] = math.Sqrt(s)
	}
	return out
}

func (r *recheck) bound(qi int, gj int32) float64 {
	s := r.qn[qi] + r.gn[gj]
	return r.gamma*s*s + r.gamma*f32Tiny + r.extra
}

// certify returns w (queries r0, r0+1, …) with the band and the exact
// order that make a searcher's watched ranks those of the exact distances
// (knn.Watch.Band): two rows whose exact order differs from their float32
// order have values within e(x, c₁) + e(x, c₂) of each other, and near a
// value v both their squared distances are below v + E (E bounds every
// e), so min(max ‖c‖, ‖x‖ + √(v + E)) bounds both norms.
func (r *recheck) certify(w *knn.Watch, r0 int) *knn.Watch {
	if w == nil {
		return nil
	}
	c := *w
	c.Band = func(i int, v float32) float32 {
		qi := r0 + i
		s := r.qn[qi] + r.gMax
		if r.metric == knn.L2 {
			E := r.gamma*s*s + r.gamma*f32Tiny + r.extra
			s = r.qn[qi] + min(r.gMax, r.qn[qi]+math.Sqrt(max(float64(v), 0)+E))
		}
		e := r.gamma*s*s + r.gamma*f32Tiny + r.extra
		return float32(2 * e * (1 + 0x1p-20))
	}
	c.Order = func(i int, ids []int32) {
		rk := r.ranker(r0 + i)
		cs := make([]exactdist.Cand, len(ids))
		for j, id := range ids {
			cs[j] = rk.Cand(id)
		}
		slices.SortFunc(cs, rk.Compare)
		for j := range cs {
			ids[j] = cs[j].ID
		}
	}
	return &c
}

// window returns the deepest position (1-based) the metrics read for a
// query of dense class c, at most k.
func (r *recheck) window(c int32, k int) int {
	if r.full {
		return k
	}
	m := r.plan.relevant[c]
	if r.plan.mapR {
		m = max(m, r.plan.classSize[c])
	}
	if r.plan.map1000 {
		m = max(m, map1000Window)
	}
	for _, kk := range r.plan.ks {
		m = max(m, kk)
	}
	return min(m, k)
}

// recheckBand is how many candidates below the list the search returns
// for the recheck: the near-ties around the list's end are then in view,
// and a query with one there is put in exact order within its list
// rather than ranked again against the whole gallery.
const recheckBand = 8

// apply checks the queries r0, r0+1, … of nb, whose lists are k deep
// plus up to recheckBand candidates below, puts in exact order those
// whose metrics float32 rounding could change (within the list, or
// against the whole gallery when a candidate below the list could enter
// it), updates their watched ranks, and trims nb to depth k.
func (r *recheck) apply(nb *knn.Neighbors, r0, k int, watch *knn.Watch) {
	kk := nb.K
	for i := 0; i < nb.N; i++ {
		ids, dist := nb.IDsOf(i), nb.DistOf(i)
		inner, outer := r.uncertain(r0+i, ids, dist, k)
		var watched []int32
		if watch != nil {
			watched = watch.IDs[i]
			// A searcher that cannot give the exact ranks leaves those
			// beyond the list to the float32 distances: rank again unless
			// every watched row is in the list.
			outer = outer || !nb.RanksExact && !allListed(ids, watched)
		}
		switch {
		case outer:
			r.Rechecked++
			rk := r.rank64(r0+i, ids, dist, watched, watch)
			if watch != nil {
				nb.Ranks[i] = rk
			}
		case inner:
			r.Reordered++
			r.reorder64(r0+i, ids, dist)
			if watch != nil {
				nb.Ranks[i] = listRanks(ids, watched, nb.Ranks[i], watch.MaxRank)
			}
		}
	}
	if kk == k {
		return
	}
	for i := 0; i < nb.N; i++ {
		copy(nb.IDs[i*k:(i+1)*k], nb.IDs[i*kk:i*kk+k])
		copy(nb.Dist[i*k:(i+1)*k], nb.Dist[i*kk:i*kk+k])
	}
	nb.K = k
	nb.IDs, nb.Dist = nb.IDs[:nb.N*k], nb.Dist[:nb.N*k]
}

// allListed reports whether every watched row is in the list ids.
func allListed(ids, watched []int32) bool {
	for _, w := range watched {
		if !slices.Contains(ids, w) {
			return false
		}
	}
	return true
}

// listRanks returns the watched ranks after a reorder within the list ids:
// the watched rows in the list take their new positions, ranks beyond the
// list stay (the rows before them are the same set).
func listRanks(ids, watched, old []int32, maxRank int) []int32 {
	if !slices.IsSorted(watched) {
		watched = slices.Sorted(slices.Values(watched))
	}
	var out []int32
	for p, id := range ids {
		if p+1 > maxRank || id < 0 {
			continue
		}
		if _, ok := slices.BinarySearch(watched, id); ok {
			out = append(out, int32(p+1))
		}
	}
	for _, rk := range old {
		if int(rk) > len(ids) {
			out = append(out, rk)
		}
	}
	return out
}

// reorder64 sorts the list ids/dist of query qi by exact distance (ties
// by lower index). Only runs of candidates whose consecutive float32 gaps
// are within 2e can be out of order (two candidates farther apart keep
// their order), so only those are ranked again.
func (r *recheck) reorder64(qi int, ids []int32, dist []float32) {
	n := len(ids)
	for n > 0 && ids[n-1] < 0 {
		n--
	}
	e := 0.0
	for j := 0; j < n; j++ {
		e = max(e, r.bound(qi, ids[j]))
	}
	rk := r.ranker(qi)
	var cs []exactdist.Cand
	for a := 0; a < n; {
		b := a + 1
		for b < n && math.Abs(float64(dist[b])-float64(dist[b-1])) <= 2*e {
			b++
		}
		if b-a > 1 {
			cs = cs[:0]
			for j := a; j < b; j++ {
				cs = append(cs, rk.Cand(ids[j]))
			}
			slices.SortFunc(cs, rk.Compare)
			for j, c := range cs {
				ids[a+j], dist[a+j] = c.ID, r.out32(qi, c.V)
			}
		}
		a = b
	}
}

// ranker orders query qi's candidates exactly.
func (r *recheck) ranker(qi int) exactdist.Ranker {
	return exactdist.Ranker{Kind: r.kind, X: r.rq.Row(qi), Row: func(id int32) []float32 { return r.rg.Row(int(id)) }}
}

// out32 turns an exactdist key back into the list's float32 value: the
// squared distance, the inner product, or the cosine.
func (r *recheck) out32(qi int, v float64) float32 {
	switch r.kind {
	case exactdist.InnerProduct:
		return float32(-v)
	case exactdist.Cosine:
		var s float64
		for _, w := range r.rq.Row(qi) {
			s += float64(w) * float64(w)
		}
		return float32(-v / math.Sqrt(s))
	}
	return float32(v)
}

// uncertain reports whether float32 rounding could change a metric of
// query qi with list ids/dist (k items and the band below): inner, by an
// order within the list; outer, by a row below the list entering it.
func (r *recheck) uncertain(qi int, ids []int32, dist []float32, k int) (inner, outer bool) {
	n := len(ids)
	for n > 0 && ids[n-1] < 0 {
		n--
	}
	if n == 0 {
		return false, false
	}
	ql := r.plan.qLabels[qi]
	m := r.window(ql, min(k, n))
	if m == 0 {
		return false, false
	}
	// gap is how much worse position b is than position a (≥ 0).
	gap := func(a, b int) float64 {
		if r.metric == knn.IP {
			return float64(dist[a]) - float64(dist[b])
		}
		return float64(dist[b]) - float64(dist[a])
	}
	e := 0.0
	pos := 0
	for j := 0; j < n; j++ {
		e = max(e, r.bound(qi, ids[j]))
		if r.plan.gLabels[ids[j]] == ql {
			pos++
		}
	}
	// Pairs inside the list: by the chain argument a swap of two items of
	// different relevance within 2e shows as such a consecutive pair.
	for j := 0; j+1 < n; j++ {
		if gap(m-1, j) > 2*e {
			break // beyond reach of the window's items
		}
		if (r.plan.gLabels[ids[j]] == ql) != (r.plan.gLabels[ids[j+1]] == ql) && gap(j, j+1) <= 2*e {
			inner = true
			break
		}
	}
	if n <= k {
		return inner, false // the list holds the whole gallery
	}
	// Rows below the list rank behind ids[n−1]; one could overtake a
	// window item j only with a float32 distance within e_j + e_o of it.
	var eo float64
	if r.metric == knn.IP {
		s := r.qn[qi] + r.gMax
		eo = r.gamma*s*s + r.gamma*f32Tiny + r.extra
	} else {
		d := float64(dist[m-1]) + e
		s := 2*r.qn[qi] + math.Sqrt(max(d, 0))
		eo = r.gamma*s*s + r.gamma*f32Tiny + r.extra
	}
	last := m - 1
	if pos >= r.plan.relevant[ql] {
		// Every positive is in the list: rows below are negatives, and
		// only a positive in the window can lose its place to one.
		last = -1
		for j := m - 1; j >= 0; j-- {
			if r.plan.gLabels[ids[j]] == ql {
				last = j
				break
			}
		}
		if last < 0 {
			return inner, false
		}
	}
	return inner, gap(last, n-1) <= e+eo
}

// rank64 ranks query qi exactly against the whole gallery (ties by
// lower index, the query's own row excluded under leave-one-out), writes
// its list into ids/dist (len(ids) deep) and returns the ranks of the
// watched rows, as knn.Watch defines them.
func (r *recheck) rank64(qi int, ids []int32, dist []float32, watched []int32, watch *knn.Watch) []int32 {
	rk := r.ranker(qi)
	cs := make([]exactdist.Cand, 0, r.g.Rows)
	for j := 0; j < r.g.Rows; j++ {
		if !r.loo || j != qi {
			cs = append(cs, rk.Cand(int32(j)))
		}
	}
	slices.SortFunc(cs, rk.Compare)
	for j := range ids {
		ids[j], dist[j] = -1, r.out32(qi, math.Inf(1))
		if j < len(cs) {
			ids[j], dist[j] = cs[j].ID, r.out32(qi, cs[j].V)
		}
	}
	if watch == nil {
		return nil
	}
	var ranks []int32
	for j := 0; j < len(cs) && j < watch.MaxRank; j++ {
		if slices.Contains(watched, cs[j].ID) {
			ranks = append(ranks, int32(j+1))
		}
	}
	return ranks
}
