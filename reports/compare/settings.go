package compare

import (
	"slices"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/reports"
)

// CheckSettings refuses a result format (reports.ResultFormats), a number
// of resamples or a confidence level that compare cannot use (usage
// errors).
func CheckSettings(format string, resamples int, level float64) error {
	if !slices.Contains(reports.ResultFormats, format) {
		return usage.Errorf("--format must be table, json, markdown or latex (got %q)%s", format, suggest.Hint(format, []string{"table", "json", "markdown", "latex"}))
	}
	if resamples < 1 {
		return usage.Errorf("--resamples %d: must be ≥ 1", resamples)
	}
	if !(level > 0 && level < 1) {
		return usage.Errorf("--level %v: must lie in (0, 1)", level)
	}
	return nil
}
