package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/metrics"
)

// The unit rule of every human-readable output (eval's tables, report's
// and tune's tables and notes, the figures): a metric whose descriptor is
// a fraction in [0, 1] (metrics.Descriptor.Percent) is shown in percent
// with 2 decimals, any other metric (ρ, dist_ratio, the loss) as is with 4.
// JSON and CSV hold the values as computed.

// IsPercentMetric reports whether key is a fraction in [0, 1] that tables
// and figures show in percent (metrics.Descriptor.Percent).
func IsPercentMetric(key string) bool { return metrics.IsPercent(key) }

// precisionFor is the number of decimals metric m is shown with: 2 for
// percentages (as in Roth et al. 2020 Tab. 4–9), 4 for raw fractions and for
// metrics that are not fractions.
func precisionFor(m string, raw bool) int {
	if IsPercentMetric(m) && !raw {
		return 2
	}
	return 4
}

// FormatMetric shows value v of metric key under the unit rule. NaN (a
// mean over no query) is "n/a", ±Inf (ρ of a rank-deficient matrix) is
// shown as such.
func FormatMetric(key string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 0):
		return fmt.Sprint(v)
	case IsPercentMetric(key):
		return strconv.FormatFloat(100*v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// FormatMetricUnit is FormatMetric with "%" after a percentage, for values
// in running text (notes, progress lines).
func FormatMetricUnit(key string, v float64) string {
	s := FormatMetric(key, v)
	if IsPercentMetric(key) && !math.IsNaN(v) && !math.IsInf(v, 0) {
		s += "%"
	}
	return s
}

// UnitNote states the unit rule for the metrics titled titles (keys
// their keys): "metrics in % except rho, dist_ratio; JSON holds fractions".
func UnitNote(keys, titles []string) string {
	var raw []string
	for i, k := range keys {
		if !IsPercentMetric(k) {
			raw = append(raw, titles[i])
		}
	}
	switch {
	case len(raw) == len(keys):
		return "values as computed (no fraction metric shown)"
	case len(raw) > 0:
		return "metrics in % except " + strings.Join(raw, ", ") + "; JSON holds fractions"
	}
	return "metrics in %; JSON holds fractions"
}
