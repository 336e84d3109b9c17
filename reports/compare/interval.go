package compare

import (
	"fmt"
	"slices"

	"github.com/dmlbench/dmlbench/metrics"
)

// Interval is the class-bootstrap interval of one metric of one result
// (not a difference): the percentile interval at opt.Level of the metric
// recomputed over opt.Resamples draws of classes with replacement, each
// class bringing its queries' values (query averaging) or its class mean
// (per-class averaging), as Compare resamples. classes is the number of
// classes with a counted query; ok is false when key has no per-query
// values or no query counts.
func Interval(v *metrics.QueryValues, key string, opt Options) (lo, hi float64, classes int, ok bool, err error) {
	if opt.Resamples < 1 || !(opt.Level > 0 && opt.Level < 1) {
		return 0, 0, 0, false, fmt.Errorf("interval: resamples %d, level %v", opt.Resamples, opt.Level)
	}
	j := slices.Index(v.Keys, key)
	if j < 0 {
		return 0, 0, 0, false, nil
	}
	// The terms of B − A with A ≡ 0 (same counted queries): B's own terms.
	zero := &metrics.QueryValues{Keys: v.Keys, Index: v.Index, Class: v.Class, Labels: v.Labels, Values: make([][]float64, len(v.Values))}
	zero.Values[j] = make([]float64, len(v.Values[j]))
	for i, x := range v.Values[j] {
		if x != x { // NaN: not counted
			zero.Values[j][i] = x
		}
	}
	ct, err := terms(zero, v, j, j, opt.Average)
	if err != nil || len(ct.num) == 0 {
		return 0, 0, 0, false, err
	}
	lo, hi, _ = bootstrapCI(ct, opt)
	return lo, hi, len(ct.num), true, nil
}
