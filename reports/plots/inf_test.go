package plots

import (
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/reports"
)

// An infinite ρ (a rank-deficient embedding, e.g. raw pixels with constant
// border pixels) is named by the ρ figure instead of being dropped.
func TestInfiniteRhoNamed(t *testing.T) {
	runs := []reports.LoadedRun{
		{Path: "a/run.json", Run: &record.Run{Schema: 1, Name: "pixels", Dataset: "omniglot", Method: map[string]string{"loss": "pixels"}, Status: "done",
			Final: record.Metrics{"R@1": 0.35, "rho": math.Inf(1)}}},
		{Path: "b/run.json", Run: &record.Run{Schema: 1, Name: "margin", Dataset: "omniglot", Method: map[string]string{"loss": "margin"}, Status: "done",
			Final: record.Metrics{"R@1": 0.38, "rho": 0.2}}},
	}
	series, err := RhoPoints(runs, []string{"loss"}, "R@1", "final", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlot(series, PlotOptions{XLabel: "ρ (spectral decay)", YLabel: "R@1 (%)", Points: true, PointLabels: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.X.Label.Text, "pixels (ρ = +Inf)") {
		t.Fatalf("caption %q does not name the infinite point", p.X.Label.Text)
	}
}
