package plots

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/reports"
)

// near reports |a−b| ≤ tol·max(1, |b|).
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestNormalizeAndAverageSpectra(t *testing.T) {
	s, err := NormalizeSpectrum([]float64{1, 3, 2}, "sum")
	if err != nil || !near(s[0], 0.5, 1e-15) || !near(s[1], 1.0/3, 1e-15) || !near(s[2], 1.0/6, 1e-15) {
		t.Fatalf("sum-normalised %v %v", s, err)
	}
	s, _ = NormalizeSpectrum([]float64{1, 4, 2}, "max")
	if s[0] != 1 || s[1] != 0.5 || s[2] != 0.25 {
		t.Fatalf("max-normalised %v", s)
	}
	// Per-class average (Roth et al. 2020 §E): [2,2] → [.5,.5]; [4] → [1, 0 (rank 1)].
	m, sd, err := AverageSpectra([][]float64{{2, 2}, {4}}, "sum")
	if err != nil || !near(m[0], 0.75, 1e-15) || !near(m[1], 0.25, 1e-15) || !near(sd[0], math.Sqrt(0.125), 1e-15) {
		t.Fatalf("average %v ± %v %v", m, sd, err)
	}
	for _, bad := range [][]float64{nil, {0, 0}, {1, math.NaN()}, {-1, 2}} {
		if _, err := NormalizeSpectrum(bad, "sum"); err == nil {
			t.Errorf("spectrum %v accepted", bad)
		}
	}
	if _, err := NormalizeSpectrum([]float64{1}, "l2"); err == nil {
		t.Error("unknown normalisation accepted")
	}
}

func TestSeriesFromRuns(t *testing.T) {
	cub, omni := cubAndOmniglot(t)
	pts, err := RhoPoints(cub, []string{"loss"}, "R@1", "final", false, nil)
	if err != nil || len(pts) != 3 {
		t.Fatalf("rho points %v %v", pts, err)
	}
	// margin: ρ = .20,.18,.16 → 0.18 ± 0.02; R@1 62 ± 2 (hand computed).
	p := pts[1]
	if p.Label != "margin" || !near(p.X[0], 0.18, 1e-12) || !near(p.XErr[0], 0.02, 1e-9) || !near(p.Y[0], 62, 1e-12) || !near(p.YErr[0], 2, 1e-12) {
		t.Fatalf("margin point %+v", p)
	}
	// ρ from the spectrum when the metric is absent.
	noRho := make([]reports.LoadedRun, len(cub))
	for i, r := range cub {
		c := *r.Run
		c.Final = map[string]float64{"R@1": r.Final["R@1"]}
		noRho[i] = reports.LoadedRun{Path: r.Path, Run: &c}
	}
	pts, err = RhoPoints(noRho, []string{"loss"}, "R@1", "final", false, func(s []float64) (float64, error) { return s[0], nil })
	if err != nil || len(pts) != 2 || pts[0].X[0] != 10 {
		t.Fatalf("rho from spectrum %+v %v", pts, err)
	}
	rec, err := RecallSeries(cub, []string{"loss"}, "final", false)
	if err != nil || len(rec) != 3 || len(rec[1].X) != 4 || rec[1].X[3] != 8 || !near(rec[1].Y[0], 62, 1e-12) {
		t.Fatalf("recall %+v %v", rec, err)
	}
	loss, met, err := CurveSeries(cub, []string{"loss"}, "R@1", false)
	if err != nil || len(loss) != 2 || len(met) != 2 || !near(loss[0].Y[0], 0.49, 1e-12) || len(loss[0].X) != 3 {
		t.Fatalf("curves %+v %+v %v", loss, met, err)
	}
	// margin R@1 at epoch 0: (0.5, 0.52, 0.54) → 52 %.
	if !near(met[0].Y[0], 52, 1e-9) {
		t.Fatalf("curve R@1 %v", met[0].Y)
	}
	sw, err := SweepSeries(omni, nil, "embed-dim", "R@1", "final", false)
	if err != nil || len(sw) != 2 {
		t.Fatalf("sweep %+v %v", sw, err)
	}
	// margin d32: 83.2, 84.2 → 83.7; d64: 86.4, 87.4 → 86.9.
	if sw[0].Label != "margin/distance" || sw[0].X[0] != 32 || sw[0].X[1] != 64 || !near(sw[0].Y[0], 83.7, 1e-9) || !near(sw[0].Y[1], 86.9, 1e-9) {
		t.Fatalf("sweep margin %+v", sw[0])
	}
	if _, err := SweepSeries(cub, nil, "batch_size", "R@1", "final", false); err == nil {
		t.Fatal("sweep over a missing parameter accepted")
	}
	sp, err := RunSpectra(cub, []string{"loss"}, "sum", 10)
	if err != nil || len(sp) != 2 || len(sp[0].X) != 10 || sp[0].YErr == nil {
		t.Fatalf("spectra %+v %v", sp, err)
	}
}

// TestSavePlots renders every figure kind in every format and checks
// the files' magic bytes. Set DMLBENCH_PLOT_DIR to keep them for viewing.
func TestSavePlots(t *testing.T) {
	dir := os.Getenv("DMLBENCH_PLOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	cub, omni := cubAndOmniglot(t)
	spec, _ := RunSpectra(cub, []string{"loss"}, "sum", 0)
	rho, _ := RhoPoints(cub, []string{"loss"}, "R@1", "final", false, nil)
	rec, _ := RecallSeries(cub, []string{"loss"}, "final", false)
	sw, _ := SweepSeries(omni, nil, "embed_dim", "R@1", "final", false)
	figs := map[string]func(string) error{
		"spectrum": func(p string) error {
			return SaveSeries(p, spec, PlotOptions{Title: "spectrum", XLabel: "index", YLabel: SpectrumYLabel("sum"), LogY: true})
		},
		"rho": func(p string) error {
			return SaveSeries(p, rho, PlotOptions{XLabel: "ρ", YLabel: "R@1 (%)", Points: true, PointLabels: true})
		},
		"recall": func(p string) error { return SaveSeries(p, rec, PlotOptions{XLabel: "k", YLabel: "R@k", LogX: true}) },
		"sweep": func(p string) error {
			return SaveSeries(p, sw, PlotOptions{XLabel: "embed dim", YLabel: "R@1", LogX: true})
		},
		"curves": func(p string) error {
			_, err := SaveCurves(p, cub, []string{"loss"}, "R@1", false, PlotOptions{})
			return err
		},
	}
	magic := map[string][]byte{".png": []byte("\x89PNG"), ".svg": []byte("<?xml"), ".pdf": []byte("%PDF"),
		".eps": []byte("%!PS"), ".jpg": []byte("\xff\xd8"), ".tif": []byte("II*\x00")}
	for name, f := range figs {
		for ext, m := range magic {
			p := filepath.Join(dir, name+ext)
			if err := f(p); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			b, err := os.ReadFile(p)
			if err != nil || !bytes.HasPrefix(b, m) || len(b) < 500 {
				t.Fatalf("%s: %d bytes, prefix %q, %v", p, len(b), b[:min(8, len(b))], err)
			}
		}
	}
	if err := SaveSeries(filepath.Join(dir, "x.bmp"), rec, PlotOptions{}); err == nil {
		t.Fatal("unknown image format accepted")
	}
	if err := SaveSeries(filepath.Join(dir, "x.png"), nil, PlotOptions{}); err == nil {
		t.Fatal("empty plot accepted")
	}
	// Log axes drop non-positive points instead of failing; all-bad fails.
	if err := SaveSeries(filepath.Join(dir, "neg.png"), []Series{{X: []float64{1, 2}, Y: []float64{-1, 0}}}, PlotOptions{LogY: true}); err == nil {
		t.Fatal("all non-positive values on a log axis accepted")
	}
	if err := SaveSeries(filepath.Join(dir, "part.png"), []Series{{X: []float64{1, 2, 3}, Y: []float64{-1, 0.5, 0.25}}}, PlotOptions{LogY: true}); err != nil {
		t.Fatal(err)
	}
}

// Linear axes get ticks at round values (multiples of 1, 2, 2.5 or 5
// times a power of ten), 4 to 7 of them labelled, with no more decimals
// than the step needs (no "25.00"); integer-valued x axes (epochs,
// indices, dimensions) get integer ticks only, also on short ranges.
func TestRoundTicks(t *testing.T) {
	cases := []struct {
		min, max float64
		integer  bool
		want     string // the labels
	}{
		{0, 100, false, "0 20 40 60 80 100"},
		{25, 75, false, "30 40 50 60 70"},
		{1, 6, true, "1 2 3 4 5 6"},
		{1, 3, true, "1 2 3"},
		{0, 1000, true, "0 200 400 600 800 1000"},
		{32, 256, true, "50 100 150 200 250"},
		{5, 35, true, "5 10 15 20 25 30 35"},
		{0.2, 0.6, false, "0.2 0.3 0.4 0.5 0.6"},
		{0.25, 1.25, false, "0.4 0.6 0.8 1.0 1.2"},
		{0, 12.5, false, "0.0 2.5 5.0 7.5 10.0 12.5"},
		{27.5, 44.2, false, "30 35 40"},
	}
	for _, c := range cases {
		var labels []string
		for _, tk := range (roundTicks{integer: c.integer}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if c.integer && tk.Value != math.Trunc(tk.Value) {
				t.Errorf("%v: integer axis has a tick at %g", c, tk.Value)
			}
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("ticks of [%g, %g] (integer %v): %q, want %q", c.min, c.max, c.integer, got, c.want)
		}
	}
}

// The title is a title, the caption line appears only when given, and the
// 5% margins keep every marker off the frame.
func TestTitleAndCaption(t *testing.T) {
	s := []Series{{Label: "margin", X: []float64{1, 2, 3}, Y: []float64{30, 35, 36}}}
	f, err := NewPlot(s, PlotOptions{Title: "R@1", XLabel: "epoch", Caption: "n = 3 seeds"})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Plot
	if p.Title.Text != "R@1" || p.X.Label.Text != "epoch\nn = 3 seeds" {
		t.Errorf("title %q, x label %q", p.Title.Text, p.X.Label.Text)
	}
	if p.X.Min >= 1 || p.X.Max <= 3 || p.Y.Min >= 30 || p.Y.Max <= 36 {
		t.Errorf("ranges x [%g, %g], y [%g, %g] touch the data", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	f, err = NewPlot(s, PlotOptions{Title: "R@1", NoTitle: true, XLabel: "epoch"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Plot.Title.Text != "" || f.Plot.X.Label.Text != "epoch" {
		t.Errorf("NoTitle: title %q, x label %q", f.Plot.Title.Text, f.Plot.X.Label.Text)
	}
}

// Dense curves keep a few markers per series, at shifted positions, so two
// coinciding spectra stay distinguishable.
func TestThinIndexShiftsPerSeries(t *testing.T) {
	idx := make([]int, 128)
	for i := range idx {
		idx[i] = i
	}
	a, b := thinIndex(idx, 12, 0), thinIndex(idx, 12, 1)
	if len(a) < 10 || len(a) > 13 || len(b) < 10 {
		t.Fatalf("%d and %d markers", len(a), len(b))
	}
	if a[0] == b[0] {
		t.Fatalf("series 0 and 1 both start at %d", a[0])
	}
}

// cubAndOmniglot loads the test runs split into the CUB200 runs and the
// others (Omniglot).
func cubAndOmniglot(t *testing.T) (cub, omni []reports.LoadedRun) {
	l, err := reports.LoadRuns([]string{"../testdata/runs"}, reports.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range l.Runs {
		if r.Dataset == "cub200" {
			cub = append(cub, r)
		} else {
			omni = append(omni, r)
		}
	}
	return cub, omni
}
