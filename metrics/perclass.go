package metrics

import (
	"math"
	"sort"
	"strconv"
)

// Per-class averaging (pytorch-metric-learning's avg_of_avgs) and
// per-class values: each query's terms are scored alone, then added to the
// totals and to its class's sums (scoreRange), and every class's metrics
// come from its sums exactly as the totals do.

// Average selects how per-query values become one number.
type Average string

const (
	// PerQuery is the mean over queries (default).
	PerQuery Average = "query"
	// PerClass is the mean over classes of each class's mean over its
	// queries: pytorch-metric-learning's avg_of_avgs. Classes with no
	// counted query (all lone, where lone queries are left out) do not enter
	// the mean.
	PerClass Average = "per-class"
)

// ClassResult holds one class's k-NN metrics (Options.PerClass). A metric
// undefined for the class (a mean over no query) is left out.
type ClassResult struct {
	Class   string             `json:"class"`
	Queries int                `json:"queries"`
	Metrics map[string]float64 `json:"metrics"`
}

// reset zeroes s for the next query (the recall slice is kept).
func (s *retrievalSums) reset() {
	r, e, en := s.recall, s.extra, s.extraN
	clear(r)
	clear(e)
	clear(en)
	*s = retrievalSums{recall: r, extra: e, extraN: en}
}

// addClasses merges o's per-class sums into s's.
func (s *retrievalSums) addClasses(o *retrievalSums) {
	if len(o.classes) == 0 {
		return
	}
	if s.classes == nil {
		s.classes = map[int32]*retrievalSums{}
	}
	for y, oc := range o.classes {
		c := s.classes[y]
		if c == nil {
			c = &retrievalSums{recall: make([]float64, len(oc.recall)),
				extra: make([]float64, len(oc.extra)), extraN: make([]int, len(oc.extraN))}
			s.classes[y] = c
		}
		c.add(oc)
		c.queries += oc.queries
	}
}

// classValues returns each class's metric values, classes in dense id order.
func (p *retrievalPlan) classValues(s *retrievalSums) ([]int32, []map[string]float64, []int) {
	ids := make([]int32, 0, len(s.classes))
	for y := range s.classes {
		ids = append(ids, y)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	vals := make([]map[string]float64, len(ids))
	queries := make([]int, len(ids))
	for i, y := range ids {
		vals[i] = p.values(s.classes[y])
		queries[i] = s.classes[y].queries
	}
	return ids, vals, queries
}

// classAverage is the mean over classes of the per-class values of each
// metric, leaving out classes where the metric is undefined (NaN); NaN
// when no class has it.
func classAverage(vals []map[string]float64) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for _, m := range vals {
		for k, v := range m {
			if v == v { // not NaN
				sum[k] += v
				n[k]++
			} else if _, ok := n[k]; !ok {
				n[k] = 0
			}
		}
	}
	out := map[string]float64{}
	for k, c := range n {
		out[k] = ratio(sum[k], c)
	}
	return out
}

// labelValues returns the distinct label values of the sets in increasing
// order: value i is dense id i (as denseLabels assigns them).
func labelValues(sets ...[]int32) []int32 {
	seen := map[int32]bool{}
	var out []int32
	for _, s := range sets {
		for _, v := range s {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// classResults names each class's defined metric values.
func classResults(ids []int32, vals []map[string]float64, queries []int, values []int32, names []string) []ClassResult {
	out := make([]ClassResult, len(ids))
	for i, y := range ids {
		name := className(values[y], names)
		m := map[string]float64{}
		for k, x := range vals[i] {
			if !math.IsNaN(x) {
				m[k] = x
			}
		}
		out[i] = ClassResult{Class: name, Queries: queries[i], Metrics: m}
	}
	return out
}

// className is label value v's name: names[v], or v itself.
func className(v int32, names []string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return strconv.Itoa(int(v))
}
