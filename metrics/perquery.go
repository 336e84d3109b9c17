package metrics

import (
	"math"
	"slices"
)

// Per-query values (Options.PerQuery): each scored query's term of every
// k-NN metric, the same float64 that is added into the metric's sum. A
// metric's value is the mean of its column taken as Evaluate takes it
// (Mean): terms added in query order within fixed blocks of scoreChunk
// query rows, the block sums added in order. Per-class values and
// `dmlbench compare` read these same terms.

// QueryValues holds the per-query values of the k-NN metrics.
type QueryValues struct {
	// Keys are the metric keys of the columns, in canonical order.
	Keys []string
	// Index is each query's row: its row of Input.Emb (leave-one-out and
	// Input.QueryRows) or its query index (query/gallery).
	Index []int
	// Class is each query's dense class id (0..classes−1), Labels its
	// label as Result.PerClass names it.
	Class  []int32
	Labels []string
	// Values[j][i] is metric Keys[j] of query i; NaN where the query does
	// not count for the metric (a lone query under MAP@R, say).
	Values [][]float64
}

// Column returns the values of metric key, or nil.
func (v *QueryValues) Column(key string) []float64 {
	for j, k := range v.Keys {
		if k == key {
			return v.Values[j]
		}
	}
	return nil
}

// Mean is the metric of a column under per-query averaging, bit for bit as
// Evaluate computes it: the counted values (not NaN) of each block of
// scoreChunk consecutive query rows summed in order, the block sums added
// in order, divided by the count; NaN when no value counts. index are the
// queries' rows (QueryValues.Index), ascending.
func Mean(index []int, vals []float64) float64 {
	total, part := 0.0, 0.0
	block, n := -1, 0
	for i, x := range vals {
		if math.IsNaN(x) {
			continue
		}
		if b := index[i] / scoreChunk; b != block {
			total += part
			part, block = 0, b
		}
		part += x
		n++
	}
	total += part
	return ratio(total, n)
}

// queryRecord collects per-query values during scoring: vals[j][q−base]
// for query row q, NaN for rows not scored.
type queryRecord struct {
	keys    []string
	base, n int // rows base … base+n−1
	vals    [][]float64
}

// newQueryRecord holds one column per k-NN value the plan computes (the
// keys of values), for query rows [lo, hi).
func (p *retrievalPlan) newQueryRecord(lo, hi int) *queryRecord {
	keys := Keys(p.values(p.newSums()))
	r := &queryRecord{keys: keys, base: lo, n: hi - lo, vals: make([][]float64, len(keys))}
	for j := range r.vals {
		r.vals[j] = make([]float64, hi-lo)
		for i := range r.vals[j] {
			r.vals[j][i] = math.NaN()
		}
	}
	return r
}

// record stores the values of query row q, scored alone into one: each
// metric's mean over this one query, t/1 = t, or NaN where it does not
// count (a mean over no query). Rows are disjoint across workers.
func (r *queryRecord) record(p *retrievalPlan, q int, one *retrievalSums) {
	v := p.values(one)
	for j, k := range r.keys {
		r.vals[j][q-r.base] = v[k]
	}
}

// table keeps the scored rows and the columns of the keys in keep (all
// when keep is nil); names maps a dense class id to its label.
func (r *queryRecord) table(p *retrievalPlan, keep func(string) bool, names func(int32) string) *QueryValues {
	out := &QueryValues{}
	var cols []int
	for j, k := range r.keys {
		if keep == nil || keep(k) {
			out.Keys = append(out.Keys, k)
			cols = append(cols, j)
		}
	}
	out.Values = make([][]float64, len(cols))
	for q := r.base; q < r.base+r.n; q++ {
		if !p.scored(q) {
			continue
		}
		out.Index = append(out.Index, q)
		out.Class = append(out.Class, p.qLabels[q])
		out.Labels = append(out.Labels, names(p.qLabels[q]))
		for c, j := range cols {
			out.Values[c] = append(out.Values[c], r.vals[j][q-r.base])
		}
	}
	return out
}

// ClassMeans are the per-class means of column j, classes in ascending
// dense id, each bit for bit the class's value in Result.PerClass (NaN for
// a class none of whose queries counts). ids are the classes present.
func (v *QueryValues) ClassMeans(j int) (ids []int32, means []float64) {
	rows := map[int32][]int{}
	for i, y := range v.Class {
		if rows[y] == nil {
			ids = append(ids, y)
		}
		rows[y] = append(rows[y], i)
	}
	slices.Sort(ids)
	means = make([]float64, len(ids))
	for c, y := range ids {
		idx := make([]int, len(rows[y]))
		x := make([]float64, len(rows[y]))
		for m, i := range rows[y] {
			idx[m], x[m] = v.Index[i], v.Values[j][i]
		}
		means[c] = Mean(idx, x)
	}
	return ids, means
}

// ClassAverage is column j under per-class averaging (Average PerClass),
// bit for bit as Evaluate computes it: the mean, in ascending class id,
// of the class means that are defined.
func (v *QueryValues) ClassAverage(j int) float64 {
	_, means := v.ClassMeans(j)
	sum, n := 0.0, 0
	for _, m := range means {
		if !math.IsNaN(m) {
			sum += m
			n++
		}
	}
	return ratio(sum, n)
}
