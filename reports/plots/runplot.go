package plots

import (
	"fmt"
	"strings"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/spectra"
)

// RunPlot is a figure of run.json files: plot spectrum, rho, recall,
// curves or sweep.
type RunPlot struct {
	Kind   string // spectrum, rho, recall, curves or sweep
	Paths  []string
	Figure FigureFlags
	// GroupBy lists the run.json method keys forming a curve, comma
	// separated (empty: the keys that vary).
	GroupBy string
	// Source is which metrics of a run: final or best.
	Source                 string
	Raw, IncludeUnfinished bool
	// Metric is the y axis's (rho, sweep) or the right panel's (curves);
	// Param the sweep's x axis, LogX its base-2 axis.
	Metric, Param string
	LogX          bool
	// Spectrum are plot spectrum's embedding files.
	Spectrum SpectrumInputs
}

// Drawn is a saved figure and the warnings about it.
type Drawn struct {
	Path     string
	Warnings []string
}

// figureDrawn is the figure at path with the warnings its notes give: the
// points not drawn (not finite) first, then the layout's.
func figureDrawn(path string, warnings, notes []string) Drawn {
	notDrawn, layout := SplitNotes(notes)
	if len(notDrawn) > 0 {
		warnings = append(warnings, "not drawn (not finite): "+strings.Join(notDrawn, "; "))
	}
	return Drawn{Path: path, Warnings: append(warnings, layout...)}
}

// Save draws series with opt into the figure file at path.
func Save(path string, series []Series, opt PlotOptions) (Drawn, error) {
	f, err := NewPlot(series, opt)
	if err != nil {
		return Drawn{}, err
	}
	if err := SavePlots(path, []*Figure{f}, opt.Width, opt.Height, opt.DPI); err != nil {
		return Drawn{}, err
	}
	return figureDrawn(path, nil, f.Notes), nil
}

// options checks the figure's settings and --source and returns the
// figure's options with the default title and axis labels given.
func (p RunPlot) options(title, xlabel, ylabel string) (PlotOptions, error) {
	return p.Figure.Options(title, xlabel, ylabel, func() error {
		if p.Source != "final" && p.Source != "best" {
			return usage.Errorf("--source must be final or best (got %q)%s", p.Source, suggest.Hint(p.Source, []string{"final", "best"}))
		}
		return nil
	})
}

// check returns the group-by keys, a usage error when a key is in no
// run's method or when no run has metric (unless ""; history: in its
// per-epoch metrics).
func (p RunPlot) check(runs []reports.LoadedRun, metric string, history bool) ([]string, error) {
	groupBy := reports.SplitList(p.GroupBy, ",")
	err := CheckGroupBy(runs, groupBy)
	if err == nil && metric != "" {
		err = CheckMetric(runs, metric, p.Source, history)
	}
	if err != nil {
		return nil, usage.Errorf("plot %s: %v", p.Kind, err)
	}
	return groupBy, nil
}

// Draw checks the settings, loads the runs and saves the figure. The
// warnings met before an error come back with it.
func (p RunPlot) Draw() (Drawn, error) {
	if p.Kind == "spectrum" {
		return p.spectrum()
	}
	if _, err := p.options("", "", ""); err != nil {
		return Drawn{}, err
	}
	if len(p.Paths) == 0 {
		return Drawn{}, usage.Errorf("%s needs at least one run directory or run.json", p.Kind)
	}
	runs, err := reports.LoadFinished(p.Paths, p.IncludeUnfinished)
	if err != nil {
		return Drawn{}, err
	}
	switch p.Kind {
	case "rho":
		return p.rho(runs)
	case "recall":
		return p.recall(runs)
	case "curves":
		return p.curves(runs)
	case "sweep":
		return p.sweep(runs)
	}
	return Drawn{}, fmt.Errorf("plot: no figure %q", p.Kind)
}

// path is where the figure goes (FigurePath).
func (p RunPlot) path() string { return FigurePath(p.Figure.Out, p.Kind) }

func (p RunPlot) spectrum() (Drawn, error) {
	in := p.Spectrum
	in.Runs = len(p.Paths)
	if err := in.Check(); err != nil {
		return Drawn{}, err
	}
	opt, err := p.options("singular value spectrum", "index i (sorted)", "")
	if err != nil {
		return Drawn{}, err
	}
	groupBy := reports.SplitList(p.GroupBy, ",")
	var series []Series
	var runs []reports.LoadedRun
	if len(p.Paths) > 0 {
		if runs, err = reports.LoadFinished(p.Paths, p.IncludeUnfinished); err != nil {
			return Drawn{}, err
		}
		if groupBy, err = p.check(runs, "", false); err != nil {
			return Drawn{}, err
		}
		if series, err = RunSpectra(runs, groupBy, in.Normalize, in.Top); err != nil {
			return Drawn{}, err
		}
		opt.Styles = RunStyles(runs, groupBy)
	}
	var warnings []string
	for i, e := range in.Embs {
		name, lp := "", ""
		if len(in.Names) > 0 {
			name = in.Names[i]
		} else {
			name = EmbeddingName(e, runs, groupBy)
		}
		if in.PerClass {
			lp = in.Labels[min(i, len(in.Labels)-1)]
		}
		s, skipped, err := EmbeddingCurve(e, name, lp, in.Normalize, in.Top)
		if err != nil {
			return Drawn{Warnings: warnings}, err
		}
		if skipped > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %d all-zero classes left out of the class average", e, skipped))
		}
		series = append(series, s)
	}
	if !p.Figure.YLabelSet {
		opt.YLabel = SpectrumYLabel(in.Normalize)
	}
	opt.LogY = true
	d, err := Save(p.path(), series, opt)
	d.Warnings = append(warnings, d.Warnings...)
	return d, err
}

// rhoAt1 is ρ@1 of a spectrum (spectra.Rho).
func rhoAt1(s []float64) (float64, error) { return spectra.Rho(s, 1) }

func (p RunPlot) rho(runs []reports.LoadedRun) (Drawn, error) {
	groupBy, err := p.check(runs, p.Metric, false)
	if err != nil {
		return Drawn{}, err
	}
	series, err := RhoPoints(runs, groupBy, p.Metric, p.Source, p.Raw, rhoAt1)
	if err != nil {
		return Drawn{}, err
	}
	opt, err := p.options("spectral decay ρ vs "+p.Metric, "ρ (spectral decay)", MetricLabel(p.Metric, p.Raw))
	if err != nil {
		return Drawn{}, err
	}
	// Markers in each series' colour and shape, named in the legend
	// (labels next to the points overlap when methods score alike).
	opt.Points = true
	opt.Styles = RunStyles(runs, groupBy)
	return Save(p.path(), series, opt)
}

func (p RunPlot) recall(runs []reports.LoadedRun) (Drawn, error) {
	groupBy, err := p.check(runs, "", false)
	if err != nil {
		return Drawn{}, err
	}
	series, err := RecallSeries(runs, groupBy, p.Source, p.Raw)
	if err != nil {
		return Drawn{}, err
	}
	ylabel := "R@k (%)"
	if p.Raw {
		ylabel = "R@k"
	}
	opt, err := p.options("Recall@k", "k", ylabel)
	if err != nil {
		return Drawn{}, err
	}
	opt.LogX = true
	opt.Styles = RunStyles(runs, groupBy)
	return Save(p.path(), series, opt)
}

func (p RunPlot) curves(runs []reports.LoadedRun) (Drawn, error) {
	groupBy, err := p.check(runs, p.Metric, true)
	if err != nil {
		return Drawn{}, err
	}
	opt, err := p.options("", "", "")
	if err != nil {
		return Drawn{}, err
	}
	opt.Styles = RunStyles(runs, groupBy)
	notes, err := SaveCurves(p.path(), runs, groupBy, p.Metric, p.Raw, opt)
	if err != nil {
		return Drawn{}, err
	}
	return figureDrawn(p.path(), nil, notes), nil
}

func (p RunPlot) sweep(runs []reports.LoadedRun) (Drawn, error) {
	if p.Param == "" {
		return Drawn{}, usage.Errorf("sweep needs --param (e.g. embed-dim or batch-size)")
	}
	groupBy, err := p.check(runs, p.Metric, false)
	if err != nil {
		return Drawn{}, err
	}
	series, err := SweepSeries(runs, groupBy, p.Param, p.Metric, p.Source, p.Raw)
	if err != nil {
		return Drawn{}, err
	}
	opt, err := p.options(p.Metric+" vs "+p.Param, p.Param, MetricLabel(p.Metric, p.Raw))
	if err != nil {
		return Drawn{}, err
	}
	opt.LogX = p.LogX
	// The curves are the groups of the keys other than the parameter.
	if len(groupBy) == 0 {
		groupBy, _ = reports.VaryingKeys(runs)
	}
	opt.Styles = RunStyles(runs, reports.Without(groupBy, p.Param))
	return Save(p.path(), series, opt)
}
