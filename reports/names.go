package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/metrics"
)

// ResolveMetrics resolves metric names as eval does (any case, the
// aliases of dmlbench list metrics: mapr is MAP@R, precision_at_1 is R@1) to the keys
// of the runs' metrics. A name that is neither a metric key of the runs
// (or of the reference rows) nor a known metric is an error listing the
// valid names; so is a known metric that no run holds.
func ResolveMetrics(names []string, runs []LoadedRun, opt Options) ([]string, error) {
	held := map[string]string{} // lower-case key → key as recorded
	have := map[string]float64{}
	for _, r := range runs {
		for k := range MetricsOf(r, opt.Source) {
			held[strings.ToLower(k)], have[k] = k, 0
		}
	}
	for _, ref := range opt.References {
		for k := range ref.Metrics {
			held[strings.ToLower(k)], have[k] = k, 0
		}
	}
	haveList := strings.Join(metrics.Keys(have), ", ")
	out := make([]string, len(names))
	for i, n := range names {
		if k, ok := held[strings.ToLower(n)]; ok {
			out[i] = k
			continue
		}
		if key, known := metrics.Canonical(n); known {
			if k, ok := held[strings.ToLower(key)]; ok {
				out[i] = k
				continue
			}
			return nil, fmt.Errorf("%s: no run holds %s (the runs hold %s)", n, key, haveList)
		}
		return nil, fmt.Errorf("unknown metric %q; the runs hold %s; names and aliases: %s%s", n, haveList, metricNamesWithAliases(), suggest.Hint(n, metrics.Keys(have)))
	}
	return out, nil
}

// metricNamesWithAliases lists every metric key with its aliases, as eval
// accepts them: "MAP@R (mapr, map_at_r), ...".
func metricNamesWithAliases() string {
	var parts []string
	for _, d := range metrics.All() {
		s := d.Key
		var members []string
		for m := range d.Members {
			members = append(members, m)
		}
		slices.Sort(members)
		if names := append(slices.Clone(d.Aliases), members...); len(names) > 0 {
			s += " (" + strings.Join(names, ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
