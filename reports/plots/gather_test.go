package plots

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/reports"
)

// An --emb curve is named by the method of the run.json beside the file,
// never by the file's stem.
func TestEmbeddingName(t *testing.T) {
	run := "../testdata/runs/cub200/margin-distance-spc2/s0"
	if got := EmbeddingName(filepath.Join(run, "test_emb.npy"), nil, []string{"loss", "miner"}); got != "margin/distance" {
		t.Errorf("beside a run.json: %q", got)
	}
	if got := EmbeddingName("out/px/emb.npy", nil, nil); got != "px" {
		t.Errorf("no run.json: %q, want the directory's name", got)
	}
}

// A figure goes into a directory named by --out as NAME.png.
func TestFigurePath(t *testing.T) {
	if got := FigurePath("figs/", "rho"); got != filepath.Join("figs", "rho.png") {
		t.Errorf("directory: %q", got)
	}
	if got := FigurePath("figs/r.pdf", "rho"); got != "figs/r.pdf" {
		t.Errorf("file: %q", got)
	}
}

// A metric or --group-by key no run has is an error naming those they
// have.
func TestCheckMetricAndGroupBy(t *testing.T) {
	l, err := reports.LoadRuns([]string{"../testdata/runs/cub200"}, reports.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckMetric(l.Runs, "R@1", "final", false); err != nil {
		t.Error(err)
	}
	if err := CheckMetric(l.Runs, "R@99", "final", false); err == nil || !strings.Contains(err.Error(), "have: ") {
		t.Errorf("unknown metric: %v", err)
	}
	if err := CheckGroupBy(l.Runs, []string{"loss"}); err != nil {
		t.Error(err)
	}
	if err := CheckGroupBy(l.Runs, []string{"colour"}); err == nil || !strings.Contains(err.Error(), "loss") {
		t.Errorf("unknown key: %v", err)
	}
	if MetricLabel("R@1", false) != "R@1 (%)" || MetricLabel("R@1", true) != "R@1" {
		t.Error("MetricLabel")
	}
}

// Tune curves: best so far per method, in percent, trials numbered from 1.
func TestTuneCurves(t *testing.T) {
	sum := &tune.Summary{Objective: "MAP@R", Methods: []tune.MethodSummary{
		{Name: "a", Trials: []tune.Trial{{Index: 0, Score: 0.1, Done: true}, {Index: 1, Score: 0.3, Done: true}, {Index: 2, Score: 0.2, Done: true}}},
		{Name: "b"},
	}}
	series, names, ylabel := TuneCurves(sum)
	if len(series) != 1 || len(names) != 2 || ylabel != "best-so-far validation MAP@R (%)" {
		t.Fatalf("%v %v %q", series, names, ylabel)
	}
	if s := series[0]; len(s.X) != 3 || s.X[0] != 1 || math.Abs(s.Y[2]-30) > 1e-9 {
		t.Errorf("curve %+v", s)
	}
}
