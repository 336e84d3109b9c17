package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/spectra"
)

// plotFigureFlags are the flags of every figure: file, size, style,
// resolution, title and caption.
func plotFigureFlags(what string, height float64) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "image `FILE`: .png, .pdf, .svg, .eps, .jpg or .tif by extension, or a directory (ending in / or existing) to write " + what + ".png into; required"},
		&cli.StringFlag{Name: "title", Usage: "figure title (--title \"\" draws none)", DefaultText: "one naming the figure"},
		&cli.StringFlag{Name: "caption", Usage: "a line of text under the x axis (none unless given)"},
		&cli.StringFlag{Name: "style", Value: plots.StyleDefault, Usage: "default (text follows the figure size: 10 pt at 6 × 4 in) | paper (a 3.3 × 2.4 in column figure, 8 pt text, no title unless --title)"},
		&cli.Float64Flag{Name: "width", Value: 6, Usage: "figure width in inches (per panel); --style paper: " + fmt.Sprint(plots.PaperWidth)},
		&cli.Float64Flag{Name: "height", Value: height, Usage: "figure height in inches; --style paper: " + fmt.Sprint(plots.PaperHeight)},
		&cli.IntFlag{Name: "dpi", Value: plots.DefaultDPI, Usage: "resolution of .png, .jpg and .tif files"},
	}, figureLabelFlags()...)
}

// plotCommonFlags are shared by the `dmlbench plot` subcommands that read
// run.json files.
func plotCommonFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(plotFigureFlags("SUBCOMMAND", 4),
		&cli.StringFlag{Name: "group-by", Usage: "run.json method keys forming a curve, e.g. loss,miner (default: the keys that vary)"},
		&cli.StringFlag{Name: "source", Value: "final", Usage: "which metrics of a run: final | best"},
		&cli.BoolFlag{Name: "raw", Usage: "fraction metrics as fractions instead of percent"},
		&cli.BoolFlag{Name: "include-unfinished", Usage: "also use runs whose status is not done"},
	), extra...)
}

func init() {
	register(&cli.Command{
		Name:      "plot",
		Usage:     "figures from run.json files: spectra, ρ vs R@1, R@k, training curves, dim/batch sweeps, t-SNE, tuning",
		UsageText: "dmlbench plot spectrum|rho|recall|curves|sweep PATH... --out FIG.png [options]\n   dmlbench plot tsne --emb E.npy --labels L.npy --out FIG.png [options]\n   dmlbench plot tune TUNE_DIR --out FIG.png [options]",
		Description: `The run.json subcommands read the run.json files under PATH... (recursively), group
runs by the --group-by keys of run.json "method" (one curve or point per group, mean ± std
over seeds: error bars, or a ± band on curves of 12 points or more) and write the figure
in the format of the --out extension (gonum/plot): .png (--dpi, default 300), .pdf (fonts
embedded as the subset of glyphs used), .svg (text in Liberation Sans with generic
fallbacks), .eps, .jpg or .tif. Each method keeps its colour, marker and dash in every figure of one
directory (its place among the directory's methods, sorted by name). The legend goes into
a corner where it covers no data, else right of the frame. Text sizes follow the figure
size, or --style paper for a 3.3-inch column. Points that cannot be drawn (ρ = +Inf) are
named in a warning, not in the figure; --caption adds a line under the x axis.

   spectrum  sorted singular values (normalised, log y) of run.json "spectrum" and/or
             embedding files; with --labels the class-averaged spectrum
             (Roth et al. 2020, supp. §E, Fig. 11)
   rho       ρ against R@1 (or --metric), one point per method with error bars in both
             directions (Roth et al. 2020, supp. §D, Fig. 10)
   recall    R@k against k
   curves    training loss and test metric per epoch (run.json "history")
   sweep     metric against a hyper-parameter such as embed-dim or batch-size
             (run.json method or config), one curve per method (Fehérvári et al. 2019 Fig. 1–2)
   tsne      2-D t-SNE map of an embedding file coloured by class (--emb/--labels,
             not run.json; Seidenschwarz et al. 2021 §5–6)
   tune      best-so-far validation score against the trial of a tune directory

Examples:
   dmlbench plot spectrum runs/omniglot-example --out spectrum.png --top 35
   dmlbench plot spectrum --emb out/px/emb.npy --emb runs/margin-s0/test_emb.npy --labels out/px/labels.npy --per-class --out sv.pdf
   dmlbench plot rho runs/omniglot-example --group-by loss --out rho.png
   dmlbench plot recall runs/omniglot-example --style paper --out recall.pdf
   dmlbench plot curves runs/omniglot-example --group-by loss --metric R@1 --out curves.png
   dmlbench plot sweep docs/examples/omniglot/runs-dims --param embed-dim --metric R@1 --out dims.png
   dmlbench plot tsne --emb runs/margin-s0/test_emb.npy --labels runs/margin-s0/test_labels.npy --classes 10 --out tsne.png`,
		Subcommands: []*cli.Command{
			{
				Name:      "spectrum",
				Usage:     "singular-value spectra of runs or embedding files",
				UsageText: "dmlbench plot spectrum [PATH...] [--emb E.npy [--labels L.npy]]... --out FIG",
				Description: `Curves: one per method from run.json "spectrum" (mean over seeds of the normalised
spectra), plus one per --emb file, named by --name or else by the method of the run.json
beside the file (or its directory's name). With --per-class and
--labels (one --labels per --emb, or one for all), the spectrum of each class's rows is
normalised, zero-padded and averaged over classes (Roth et al. 2020 supp. §E, Fig. 11).

Examples:
   dmlbench plot spectrum runs/omniglot-example --out spectrum.png --top 35
   dmlbench plot spectrum --emb out/px/emb.npy --emb runs/margin-s0/test_emb.npy --labels out/px/labels.npy --per-class --out sv.png`,
				Flags: plotCommonFlags(
					&cli.StringSliceFlag{Name: "emb", Usage: "embedding `FILE` (.npy or .npz:key); repeatable"},
					&cli.StringSliceFlag{Name: "labels", Usage: "labels for --emb (one, or one per --emb)"},
					&cli.StringSliceFlag{Name: "name", Usage: "legend name of an --emb curve (one per --emb, in order)"},
					&cli.BoolFlag{Name: "per-class", Usage: "class-averaged spectra of the --emb files (needs --labels)"},
					&cli.StringFlag{Name: "normalize", Value: "sum", Usage: "sum (s/Σs, as in ρ) | max (s/s₁) | none"},
					&cli.IntFlag{Name: "top", Usage: "plot the first N values (0: all; Fig. 11 shows 35)"},
				),
				Action: plotSpectrumAction,
			},
			{
				Name:        "rho",
				Usage:       "ρ (spectral decay) against a metric, one point per method",
				UsageText:   "dmlbench plot rho PATH... --out FIG [--metric R@1]",
				Description: "Examples:\n   dmlbench plot rho runs/omniglot-example --group-by loss --out rho.png\n   dmlbench plot rho runs/ --metric NMI --out rho_nmi.pdf",
				Flags:       plotCommonFlags(&cli.StringFlag{Name: "metric", Value: "R@1", Usage: "y-axis metric"}),
				Action:      plotRhoAction,
			},
			{
				Name:        "recall",
				Usage:       "R@k against k per method",
				UsageText:   "dmlbench plot recall PATH... --out FIG",
				Description: "Examples:\n   dmlbench plot recall runs/omniglot-example --group-by loss --out recall.png",
				Flags:       plotCommonFlags(),
				Action:      plotRecallAction,
			},
			{
				Name:        "curves",
				Usage:       "training loss and test metric per epoch",
				UsageText:   "dmlbench plot curves PATH... --out FIG [--metric R@1]",
				Description: "Examples:\n   dmlbench plot curves runs/omniglot-example --group-by loss --out curves.png",
				Flags:       plotCommonFlags(&cli.StringFlag{Name: "metric", Value: "R@1", Usage: "test metric of the right panel"}),
				Action:      plotCurvesAction,
			},
			{
				Name:      "sweep",
				Usage:     "metric against a hyper-parameter (embedding dimension, batch size)",
				UsageText: "dmlbench plot sweep PATH... --param embed-dim --out FIG [--metric R@1]",
				Description: `The parameter is read from run.json "method" or, failing that, the top-level key of
run.json "config" (embed-dim, batch-size, …; '-' and '_' are interchangeable).

Examples:
   dmlbench plot sweep docs/examples/omniglot/runs-dims --param embed-dim --out dims.png
   dmlbench plot sweep docs/examples/omniglot/runs-batch --param batch-size --metric NMI --log-x=false --out batch.png`,
				Flags: plotCommonFlags(
					&cli.StringFlag{Name: "param", Usage: "hyper-parameter on the x axis (required)"},
					&cli.StringFlag{Name: "metric", Value: "R@1", Usage: "y-axis metric"},
					&cli.BoolFlag{Name: "log-x", Value: true, Usage: "base-2 logarithmic x axis"},
				),
				Action: plotSweepAction,
			},
			plotTSNECommand,
			tunePlotCommand,
		},
	})
}

// plotOptions checks the figure flags and returns the options of a
// figure whose default title, x and y labels are given: the title unless
// --title was set (--title "" draws none), the size (per panel) and
// style, the resolution and the caption.
func plotOptions(c *cli.Context, title, xlabel, ylabel string) (plots.PlotOptions, error) {
	if c.String("out") == "" {
		return plots.PlotOptions{}, usagef("--out FILE (.png, .pdf, .svg, .eps, .jpg or .tif) is required")
	}
	w, h, sty, err := plots.FigureSize(c.String("style"), c.Float64("width"), c.Float64("height"), c.IsSet("width"), c.IsSet("height"), c.Int("dpi"))
	if err != nil {
		return plots.PlotOptions{}, usagef("%v", err)
	}
	if f := c.Command.Flags; hasFlag(f, "source") {
		if s := c.String("source"); s != "final" && s != "best" {
			return plots.PlotOptions{}, usagef("--source must be final or best (got %q)", s)
		}
	}
	opt := plots.PlotOptions{Title: title, XLabel: xlabel, YLabel: ylabel, Caption: c.String("caption"),
		Width: w, Height: h, DPI: c.Int("dpi"), Style: sty}
	if c.IsSet("title") {
		opt.Title = c.String("title")
		opt.NoTitle = opt.Title == ""
	}
	return opt, applyFigureLabels(c, &opt)
}

// hasFlag reports whether flags has one named name.
func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// plotRuns parses the positional paths (flags may follow them) and loads
// their runs; the plot options are checked first so usage errors come
// before any file is read.
func plotRuns(c *cli.Context) ([]reports.LoadedRun, error) {
	paths, err := reportArgs(c)
	if err != nil {
		return nil, err
	}
	if _, err := plotOptions(c, "", "", ""); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, usagef("%s needs at least one run directory or run.json", c.Command.Name)
	}
	return reportLoad(paths, c.Bool("include-unfinished"))
}

// plotGroupBy is --group-by, a usage error when a key is in no run's
// method (a figure's curves are method values; a key no run has would
// put every run under "-").
func plotGroupBy(c *cli.Context, runs []reports.LoadedRun) ([]string, error) {
	keys := reportSplit(c.String("group-by"), ",")
	have := reports.MethodKeys(runs)
	for _, k := range keys {
		if !slices.Contains(have, k) {
			return nil, usagef("plot %s: unknown --group-by key %q; the runs' method keys are: %s", c.Command.Name, k, strings.Join(have, ", "))
		}
	}
	return keys, nil
}

// plotStyles is the style index of every method of runs under --group-by
// (plots.MethodStyles), so a method looks the same in every figure of
// the directory.
func plotStyles(runs []reports.LoadedRun, groupBy []string) map[string]int {
	var names []string
	for _, g := range reports.GroupRuns(runs, groupBy) {
		names = append(names, g.Label)
	}
	return plots.MethodStyles(names)
}

// plotCheckMetric is a usage error unless some run has metric: in its
// final or best metrics (source), or, for curves, in its history.
func plotCheckMetric(c *cli.Context, runs []reports.LoadedRun, metric string, history bool) error {
	have := map[string]bool{}
	for _, r := range runs {
		if history {
			for _, e := range r.History {
				for k := range e.Metrics {
					have[k] = true
				}
			}
			continue
		}
		for k := range reports.MetricsOf(r, c.String("source")) {
			have[k] = true
		}
	}
	if have[metric] {
		return nil
	}
	names := make([]string, 0, len(have))
	for k := range have {
		names = append(names, k)
	}
	sort.Strings(names)
	where := "the runs' " + c.String("source") + " metrics"
	if history {
		where = "the runs' histories (per-epoch metrics)"
	}
	if len(names) == 0 {
		return usagef("plot %s: no metric %q: %s hold no metric", c.Command.Name, metric, where)
	}
	return usagef("plot %s: no metric %q in %s; have: %s", c.Command.Name, metric, where, strings.Join(names, ", "))
}

func metricUnit(metric string, raw bool) string {
	if !raw && reports.IsPercentMetric(metric) {
		return metric + " (%)"
	}
	return metric
}

// plotPath is where the figure goes: --out itself, or, when --out names a
// directory (it ends in a slash or exists as one), DIR/<subcommand>.png.
func plotPath(c *cli.Context) string {
	out := c.String("out")
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return filepath.Join(out, c.Command.Name+".png")
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return filepath.Join(out, c.Command.Name+".png")
	}
	return out
}

// plotDone warns about the points the figure could not draw and says
// where it went.
func plotDone(c *cli.Context, path string, notes []string) error {
	notDrawn, layout := plots.SplitNotes(notes)
	if len(notDrawn) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "warning: not drawn (not finite): %s\n", strings.Join(notDrawn, "; "))
	}
	for _, w := range layout {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	fmt.Fprintln(c.App.ErrWriter, "wrote", path)
	return nil
}

// plotSave draws series with opt into the figure file and says so.
func plotSave(c *cli.Context, series []plots.Series, opt plots.PlotOptions) error {
	f, err := plots.NewPlot(series, opt)
	if err != nil {
		return err
	}
	if err := plots.SavePlots(plotPath(c), []*plots.Figure{f}, opt.Width, opt.Height, opt.DPI); err != nil {
		return err
	}
	return plotDone(c, plotPath(c), f.Notes)
}

func plotSpectrumAction(c *cli.Context) error {
	paths, err := reportArgs(c)
	if err != nil {
		return err
	}
	embs, labs, names := c.StringSlice("emb"), c.StringSlice("labels"), c.StringSlice("name")
	if len(paths) == 0 && len(embs) == 0 {
		return usagef("spectrum needs run directories and/or --emb files")
	}
	if len(labs) > 1 && len(labs) != len(embs) {
		return usagef("give one --labels for all --emb files or one per --emb (%d vs %d)", len(labs), len(embs))
	}
	if len(names) > 0 && len(names) != len(embs) {
		return usagef("give one --name per --emb file (%d vs %d)", len(names), len(embs))
	}
	if c.Bool("per-class") && len(labs) == 0 {
		return usagef("--per-class needs --labels")
	}
	mode := c.String("normalize")
	if !plots.ValidSpectrumNorm(mode) {
		return usagef("--normalize must be sum, max or none (got %q)", mode)
	}
	top := c.Int("top")
	if top < 0 {
		return usagef("--top must be ≥ 0")
	}
	opt, err := plotOptions(c, "singular value spectrum", "index i (sorted)", "")
	if err != nil {
		return err
	}
	groupBy := reportSplit(c.String("group-by"), ",")
	var series []plots.Series
	var runs []reports.LoadedRun
	if len(paths) > 0 {
		if runs, err = reportLoad(paths, c.Bool("include-unfinished")); err != nil {
			return err
		}
		if groupBy, err = plotGroupBy(c, runs); err != nil {
			return err
		}
		s, err := plots.RunSpectra(runs, groupBy, mode, top)
		if err != nil {
			return err
		}
		series = append(series, s...)
		opt.Styles = plotStyles(runs, groupBy)
	}
	for i, e := range embs {
		name := ""
		if len(names) > 0 {
			name = names[i]
		} else {
			name = plotEmbName(e, runs, groupBy)
		}
		s, err := plotEmbeddingSpectrum(c, e, name, labs, i)
		if err != nil {
			return err
		}
		series = append(series, s)
	}
	if !c.IsSet("ylabel") {
		opt.YLabel = plots.SpectrumYLabel(mode)
	}
	opt.LogY = true
	return plotSave(c, series, opt)
}

// plotEmbName names the curve of embedding file e: the method of the
// run.json beside it (labelled as the runs of PATH are, so it takes its
// method's style), else the name of its directory, else the file's.
func plotEmbName(e string, runs []reports.LoadedRun, groupBy []string) string {
	dir := filepath.Dir(strings.SplitN(e, ".npz:", 2)[0])
	if l, err := reports.LoadRuns([]string{filepath.Join(dir, "run.json")}, reports.LoadOptions{IncludeUnfinished: true}); err == nil && len(l.Runs) == 1 {
		keys := groupBy
		if len(keys) == 0 && len(runs) > 0 {
			keys, _ = reports.VaryingKeys(runs)
		}
		if len(keys) == 0 {
			keys = []string{"loss"}
		}
		return reports.GroupLabel(l.Runs[0].Method, keys)
	}
	if abs, err := filepath.Abs(dir); err == nil && filepath.Base(abs) != string(filepath.Separator) {
		return filepath.Base(abs)
	}
	return strings.TrimSuffix(filepath.Base(e), filepath.Ext(e))
}

// plotEmbeddingSpectrum is the curve of the i-th --emb file e, named
// name: its spectrum or, with --per-class, its class-averaged spectrum
// (labels: one for all files or one per file).
func plotEmbeddingSpectrum(c *cli.Context, e, name string, labs []string, i int) (plots.Series, error) {
	if !c.Bool("per-class") {
		sp, err := plots.LoadEmbeddingSpectrum(e, "", true)
		if err != nil {
			return plots.Series{}, err
		}
		return plotSpectrumSeries(c, e, name, sp.Singular)
	}
	lp := labs[0]
	if len(labs) > 1 {
		lp = labs[i]
	}
	sp, err := plots.LoadEmbeddingSpectrum(e, lp, false)
	if err != nil {
		return plots.Series{}, err
	}
	if sp.Skipped > 0 {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s: %d all-zero classes left out of the class average\n", e, sp.Skipped)
	}
	s, err := plotSpectrumSeries(c, e, name+" (per class)", sp.PerClass)
	s.Key = name
	return s, err
}

func plotSpectrumSeries(c *cli.Context, e, name string, sv []float64) (plots.Series, error) {
	s, err := plots.EmbeddingSpectrumSeries(name, sv, c.String("normalize"), c.Int("top"))
	if err != nil {
		return plots.Series{}, fmt.Errorf("%s: %w", e, err)
	}
	return s, nil
}

// plotRho is ρ@1 of a spectrum (spectra.Rho).
func plotRho(s []float64) (float64, error) { return spectra.Rho(s, 1) }

func plotRhoAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	metric := c.String("metric")
	groupBy, err := plotGroupBy(c, runs)
	if err != nil {
		return err
	}
	if err := plotCheckMetric(c, runs, metric, false); err != nil {
		return err
	}
	series, err := plots.RhoPoints(runs, groupBy, metric, c.String("source"), c.Bool("raw"), plotRho)
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, "spectral decay ρ vs "+metric, "ρ (spectral decay)", metricUnit(metric, c.Bool("raw")))
	if err != nil {
		return err
	}
	// Markers in each series' colour and shape, named in the legend
	// (labels next to the points overlap when methods score alike).
	opt.Points = true
	opt.Styles = plotStyles(runs, groupBy)
	return plotSave(c, series, opt)
}

func plotRecallAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	groupBy, err := plotGroupBy(c, runs)
	if err != nil {
		return err
	}
	series, err := plots.RecallSeries(runs, groupBy, c.String("source"), c.Bool("raw"))
	if err != nil {
		return err
	}
	ylabel := "R@k (%)"
	if c.Bool("raw") {
		ylabel = "R@k"
	}
	opt, err := plotOptions(c, "Recall@k", "k", ylabel)
	if err != nil {
		return err
	}
	opt.LogX = true
	opt.Styles = plotStyles(runs, groupBy)
	return plotSave(c, series, opt)
}

func plotCurvesAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	metric := c.String("metric")
	groupBy, err := plotGroupBy(c, runs)
	if err != nil {
		return err
	}
	if err := plotCheckMetric(c, runs, metric, true); err != nil {
		return err
	}
	opt, err := plotOptions(c, "", "", "")
	if err != nil {
		return err
	}
	opt.Styles = plotStyles(runs, groupBy)
	notes, err := plots.SaveCurves(plotPath(c), runs, groupBy, metric, c.Bool("raw"), opt)
	if err != nil {
		return err
	}
	return plotDone(c, plotPath(c), notes)
}

func plotSweepAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	param, metric := c.String("param"), c.String("metric")
	if param == "" {
		return usagef("sweep needs --param (e.g. embed-dim or batch-size)")
	}
	groupBy, err := plotGroupBy(c, runs)
	if err != nil {
		return err
	}
	if err := plotCheckMetric(c, runs, metric, false); err != nil {
		return err
	}
	series, err := plots.SweepSeries(runs, groupBy, param, metric, c.String("source"), c.Bool("raw"))
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, metric+" vs "+param, param, metricUnit(metric, c.Bool("raw")))
	if err != nil {
		return err
	}
	opt.LogX = c.Bool("log-x")
	// The curves are the groups of the keys other than the parameter.
	if len(groupBy) == 0 {
		groupBy, _ = reports.VaryingKeys(runs)
	}
	opt.Styles = plotStyles(runs, reports.Without(groupBy, param))
	return plotSave(c, series, opt)
}
