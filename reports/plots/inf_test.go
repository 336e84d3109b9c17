package plots

import (
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports"
)

// An infinite ρ (a rank-deficient embedding, e.g. raw pixels with constant
// border pixels) is named in the figure's notes (a warning for the user)
// instead of being dropped silently, and not written into the figure.
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
	f, err := NewPlot(series, PlotOptions{XLabel: "ρ (spectral decay)", YLabel: "R@1 (%)", Points: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Notes) != 1 || f.Notes[0] != "pixels (ρ = +Inf)" {
		t.Fatalf("notes %q: want the infinite point named", f.Notes)
	}
	if strings.Contains(f.Plot.X.Label.Text, "Inf") {
		t.Fatalf("x label %q: the note went into the figure", f.Plot.X.Label.Text)
	}
}
