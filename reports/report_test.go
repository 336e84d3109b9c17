package reports

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file; got:\n%s", path, got)
	}
}

func loadTestRuns(t *testing.T) []LoadedRun {
	t.Helper()
	l, err := LoadRuns([]string{"testdata/runs"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Runs
}

func TestLoadRuns(t *testing.T) {
	l, err := LoadRuns([]string{"testdata/runs"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 16 || len(l.Skipped) != 1 || !strings.Contains(l.Skipped[0], "failed") {
		t.Fatalf("runs %d skipped %v", len(l.Runs), l.Skipped)
	}
	all, err := LoadRuns([]string{"testdata/runs/cub200"}, LoadOptions{IncludeUnfinished: true})
	if err != nil || len(all.Runs) != 9 {
		t.Fatalf("include unfinished: %d runs, %v", len(all.Runs), err)
	}
	if _, err := LoadRuns([]string{"testdata/nope"}, LoadOptions{}); err == nil {
		t.Fatal("missing path accepted")
	}
	if _, err := LoadRuns([]string{"testdata/published"}, LoadOptions{}); err == nil {
		t.Fatal("directory without run.json accepted")
	}
}

func TestAggregateValues(t *testing.T) {
	rep, err := Aggregate(loadTestRuns(t), Options{GroupBy: []string{"loss"}, Baseline: "triplet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 2 || rep.Tables[0].Dataset != "cub200" || rep.Tables[1].Dataset != "omniglot" {
		t.Fatalf("tables: %+v", rep.Tables)
	}
	cub := rep.Tables[0]
	labels := []string{}
	for _, r := range cub.Rows {
		labels = append(labels, r.Label)
	}
	if strings.Join(labels, ",") != "contrastive,margin,triplet" || cub.BaselineRow != 2 {
		t.Fatalf("rows %v baseline %d", labels, cub.BaselineRow)
	}
	margin := cub.Rows[1]
	// R@1 of margin: 60, 62, 64 % ⇒ 62 ± 2 (n−1 std), hand computed.
	if s := margin.Cells["R@1"]; s.N != 3 || !near(s.Mean, 62, 1e-12) || !near(s.Std, 2, 1e-12) {
		t.Fatalf("margin R@1 %+v", s)
	}
	if !margin.Best["R@1"] || cub.Rows[2].Best["R@1"] {
		t.Fatal("best R@1 should be margin only")
	}
	// mAP@1000: contrastive has none ⇒ n = 0 there.
	if s := cub.Rows[0].Cells["mAP@1000"]; s.N != 0 {
		t.Fatalf("contrastive mAP@1000 %+v", s)
	}
	d := margin.Delta["R@1"]
	if d == nil || !near(d.Delta, 3, 1e-12) || !near(d.P, 0.10447888668472281, 1e-9) || d.Significant {
		t.Fatalf("margin vs triplet R@1: %+v", d)
	}
	// omniglot has no "triplet" row.
	if rep.Tables[1].BaselineRow != -1 || len(rep.Notes) == 0 {
		t.Fatalf("omniglot baseline %d notes %v", rep.Tables[1].BaselineRow, rep.Notes)
	}
	if _, err := Aggregate(loadTestRuns(t), Options{Baseline: "nosuch"}); err == nil || !strings.Contains(err.Error(), "margin/distance/32") {
		t.Fatalf("unknown baseline: %v", err)
	}
	for _, bad := range []Options{{Alpha: 2}, {CI: 1.5}, {Source: "worst"}, {Bootstrap: -1}} {
		if _, err := Aggregate(loadTestRuns(t), bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
	// rho: lower is better.
	rep, _ = Aggregate(loadTestRuns(t), Options{GroupBy: []string{"loss"}, Metrics: []string{"rho"}})
	if !rep.Tables[0].Rows[1].Best["rho"] {
		t.Fatal("lowest rho (margin) not marked best")
	}
	// best source
	rep, _ = Aggregate(loadTestRuns(t), Options{GroupBy: []string{"loss"}, Metrics: []string{"R@1"}, Source: "best"})
	if s := rep.Tables[0].Rows[1].Cells["R@1"]; !near(s.Mean, 63, 1e-12) {
		t.Fatalf("best R@1 %+v", s)
	}
}

func TestBootstrapCIsDeterministic(t *testing.T) {
	// CIT: the test runs have 2–3 seeds, which auto gives a t-interval; the
	// bootstrap is checked below on a cell large enough for it.
	opt := Options{GroupBy: []string{"loss"}, Baseline: "triplet", CI: 0.95, Bootstrap: 2000, Seed: 3, CIMethod: CIT}
	a, err := Aggregate(loadTestRuns(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Aggregate(loadTestRuns(t), opt)
	s1, s2 := a.Tables[0].Rows[1].Cells["R@1"], b.Tables[0].Rows[1].Cells["R@1"]
	if s1.CILo != s2.CILo || s1.CIHi != s2.CIHi || !(s1.CILo < 62 && s1.CIHi > 62) {
		t.Fatalf("CI %v..%v vs %v..%v", s1.CILo, s1.CIHi, s2.CILo, s2.CIHi)
	}
	if d := a.Tables[0].Rows[1].Delta["R@1"]; math.IsNaN(d.CILo) || !(d.CILo < 3 && 3 < d.CIHi) {
		t.Fatalf("delta CI %+v", d)
	}
	xs := make([]float64, BootstrapMinN)
	for i := range xs {
		xs[i] = float64(i % 7)
	}
	lo1, hi1, err := BootstrapMeanCI(xs, 0.95, 2000, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	lo2, hi2, _ := BootstrapMeanCI(xs, 0.95, 2000, rand.New(rand.NewPCG(3, 3)))
	if lo1 != lo2 || hi1 != hi2 || !(lo1 < Mean(xs) && Mean(xs) < hi1) {
		t.Fatalf("bootstrap CI %v..%v vs %v..%v", lo1, hi1, lo2, hi2)
	}
}

// goldenReport is the report every golden file renders: loss/miner groups,
// Δ against triplet with Welch tests, 95% bootstrap CIs, and published
// Roth et al. 2020 Tab. 4 rows for CUB200.
func goldenReport(t *testing.T) *Report {
	refs, err := LoadReference("roth2020")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Aggregate(loadTestRuns(t), Options{
		GroupBy:             []string{"loss", "miner"},
		Metrics:             []string{"R@1", "F1", "mAP@1000", "NMI"},
		Baseline:            "triplet/distance",
		CI:                  0.95,
		Bootstrap:           1000,
		Seed:                1,
		References:          refs,
		ReferenceApproaches: []string{"Margin (D, β = 1.2)", "Triplet (D)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func plainReport(t *testing.T) *Report {
	rep, err := Aggregate(loadTestRuns(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name   string
		rep    *Report
		format string
		fo     FormatOptions
	}{
		{"markdown", goldenReport(t), "markdown", FormatOptions{}},
		{"markdown_plain", plainReport(t), "markdown", FormatOptions{}},
		{"latex", goldenReport(t), "latex", FormatOptions{Standalone: true}},
		{"latex_plain", plainReport(t), "latex", FormatOptions{}},
		{"terminal", goldenReport(t), "terminal", FormatOptions{}},
		{"terminal_plain", plainReport(t), "terminal", FormatOptions{}},
		{"terminal_color", plainReport(t), "terminal", FormatOptions{Color: true}},
		{"csv", goldenReport(t), "csv", FormatOptions{}},
		{"csv_plain", plainReport(t), "csv", FormatOptions{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, c.rep, c.format, c.fo); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
	if err := Write(&bytes.Buffer{}, plainReport(t), "html", FormatOptions{}); err == nil {
		t.Fatal("unknown format accepted")
	}
}

// Source "initial" reports the untrained model of each run.
func TestSourceInitial(t *testing.T) {
	mk := func(seed int64, r0, r1 float64) LoadedRun {
		return LoadedRun{Path: "x", Run: &record.Run{Dataset: "d", Seed: seed, Status: "done",
			Method:  map[string]string{"loss": "margin"},
			Initial: record.Metrics{"R@1": r0}, Final: record.Metrics{"R@1": r1}}}
	}
	runs := []LoadedRun{mk(0, 0.2, 0.5), mk(1, 0.4, 0.7)}
	rep, err := Aggregate(runs, Options{GroupBy: []string{"loss"}, Metrics: []string{"R@1"}, Source: "initial"})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Tables[0].Rows[0].Cells["R@1"]; !near(c.Mean, 30, 1e-9) || c.N != 2 {
		t.Fatalf("initial R@1 cell %+v, want mean 30 over 2 runs", c)
	}
	if _, err := Aggregate(runs, Options{Metrics: []string{"R@1"}, Source: "last"}); err == nil {
		t.Fatal("source \"last\" accepted")
	}
}
