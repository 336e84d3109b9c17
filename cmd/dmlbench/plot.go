package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/suggest"
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
	}, append(figureSizeFlags("default (text follows the figure size: 10 pt at 6 × 4 in) | paper (a 3.3 × 2.4 in column figure, 8 pt text, no title unless --title)",
		"figure width in inches (per panel)", height), figureLabelFlags()...)...)
}

// figureSizeFlags are the style, size and resolution flags of every
// figure, the style's and the width's help as given.
func figureSizeFlags(styleUsage, widthUsage string, height float64) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "style", Value: plots.StyleDefault, Usage: styleUsage},
		&cli.Float64Flag{Name: "width", Value: 6, Usage: widthUsage + "; --style paper: " + fmt.Sprint(plots.PaperWidth)},
		&cli.Float64Flag{Name: "height", Value: height, Usage: "figure height in inches; --style paper: " + fmt.Sprint(plots.PaperHeight)},
		&cli.IntFlag{Name: "dpi", Value: plots.DefaultDPI, Usage: "resolution of .png, .jpg and .tif files"},
	}
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

func addPlot() {
	register(&cli.Command{
		Name:        "plot",
		Usage:       "figures from run.json files: spectra, ρ vs R@1, R@k, training curves, dim/batch sweeps, t-SNE, tuning",
		UsageText:   "dmlbench plot spectrum|rho|recall|curves|sweep PATH... --out FIG.png [options]\n   dmlbench plot tsne --emb E.npy --labels L.npy --out FIG.png [options]\n   dmlbench plot tune TUNE_DIR --out FIG.png [options]",
		Description: helpText("plot"),
		Subcommands: []*cli.Command{
			{
				Name:        "spectrum",
				Usage:       "singular-value spectra of runs or embedding files",
				UsageText:   "dmlbench plot spectrum [PATH...] [--emb E.npy [--labels L.npy]]... --out FIG",
				Description: helpText("plot-spectrum"),
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
				Name:        "sweep",
				Usage:       "metric against a hyper-parameter (embedding dimension, batch size)",
				UsageText:   "dmlbench plot sweep PATH... --param embed-dim --out FIG [--metric R@1]",
				Description: helpText("plot-sweep"),
				Flags: plotCommonFlags(
					&cli.StringFlag{Name: "param", Usage: "hyper-parameter on the x axis (required)"},
					&cli.StringFlag{Name: "metric", Value: "R@1", Usage: "y-axis metric"},
					&cli.BoolFlag{Name: "log-x", Value: true, Usage: "base-2 logarithmic x axis"},
				),
				Action: plotSweepAction,
			},
			plotTSNECommand(),
			tunePlotCommand(),
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
	if slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return f.Names()[0] == "source" }) {
		if s := c.String("source"); s != "final" && s != "best" {
			return plots.PlotOptions{}, usagef("--source must be final or best (got %q)%s", s, suggest.Hint(s, []string{"final", "best"}))
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
	return reports.LoadFinished(paths, c.Bool("include-unfinished"))
}

// plotCheck returns --group-by, a usage error when a key is in no run's
// method or when no run has metric (unless ""; history: in its per-epoch
// metrics).
func plotCheck(c *cli.Context, runs []reports.LoadedRun, metric string, history bool) ([]string, error) {
	groupBy := reports.SplitList(c.String("group-by"), ",")
	err := plots.CheckGroupBy(runs, groupBy)
	if err == nil && metric != "" {
		err = plots.CheckMetric(runs, metric, c.String("source"), history)
	}
	if err != nil {
		return nil, usagef("plot %s: %v", c.Command.Name, err)
	}
	return groupBy, nil
}

// plotPath is where the figure goes (plots.FigurePath).
func plotPath(c *cli.Context) string { return plots.FigurePath(c.String("out"), c.Command.Name) }

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
	mode, top := c.String("normalize"), c.Int("top")
	in := plots.SpectrumInputs{Embs: embs, Labels: labs, Names: names, Runs: len(paths), PerClass: c.Bool("per-class"), Normalize: mode, Top: top}
	if err := in.Check(); err != nil {
		return err
	}
	opt, err := plotOptions(c, "singular value spectrum", "index i (sorted)", "")
	if err != nil {
		return err
	}
	groupBy := reports.SplitList(c.String("group-by"), ",")
	var series []plots.Series
	var runs []reports.LoadedRun
	if len(paths) > 0 {
		if runs, err = reports.LoadFinished(paths, c.Bool("include-unfinished")); err != nil {
			return err
		}
		if groupBy, err = plotCheck(c, runs, "", false); err != nil {
			return err
		}
		if series, err = plots.RunSpectra(runs, groupBy, mode, top); err != nil {
			return err
		}
		opt.Styles = plots.RunStyles(runs, groupBy)
	}
	for i, e := range embs {
		name, lp := "", ""
		if len(names) > 0 {
			name = names[i]
		} else {
			name = plots.EmbeddingName(e, runs, groupBy)
		}
		if c.Bool("per-class") {
			lp = labs[min(i, len(labs)-1)]
		}
		s, skipped, err := plots.EmbeddingCurve(e, name, lp, mode, top)
		if err != nil {
			return err
		}
		if skipped > 0 {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s: %d all-zero classes left out of the class average\n", e, skipped)
		}
		series = append(series, s)
	}
	if !c.IsSet("ylabel") {
		opt.YLabel = plots.SpectrumYLabel(mode)
	}
	opt.LogY = true
	return plotSave(c, series, opt)
}

// plotRho is ρ@1 of a spectrum (spectra.Rho).
func plotRho(s []float64) (float64, error) { return spectra.Rho(s, 1) }

func plotRhoAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	metric := c.String("metric")
	groupBy, err := plotCheck(c, runs, metric, false)
	if err != nil {
		return err
	}
	series, err := plots.RhoPoints(runs, groupBy, metric, c.String("source"), c.Bool("raw"), plotRho)
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, "spectral decay ρ vs "+metric, "ρ (spectral decay)", plots.MetricLabel(metric, c.Bool("raw")))
	if err != nil {
		return err
	}
	// Markers in each series' colour and shape, named in the legend
	// (labels next to the points overlap when methods score alike).
	opt.Points = true
	opt.Styles = plots.RunStyles(runs, groupBy)
	return plotSave(c, series, opt)
}

func plotRecallAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	groupBy, err := plotCheck(c, runs, "", false)
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
	opt.Styles = plots.RunStyles(runs, groupBy)
	return plotSave(c, series, opt)
}

func plotCurvesAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	metric := c.String("metric")
	groupBy, err := plotCheck(c, runs, metric, true)
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, "", "", "")
	if err != nil {
		return err
	}
	opt.Styles = plots.RunStyles(runs, groupBy)
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
	groupBy, err := plotCheck(c, runs, metric, false)
	if err != nil {
		return err
	}
	series, err := plots.SweepSeries(runs, groupBy, param, metric, c.String("source"), c.Bool("raw"))
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, metric+" vs "+param, param, plots.MetricLabel(metric, c.Bool("raw")))
	if err != nil {
		return err
	}
	opt.LogX = c.Bool("log-x")
	// The curves are the groups of the keys other than the parameter.
	if len(groupBy) == 0 {
		groupBy, _ = reports.VaryingKeys(runs)
	}
	opt.Styles = plots.RunStyles(runs, reports.Without(groupBy, param))
	return plotSave(c, series, opt)
}
