package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot/vg"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/spectra"
)

// plotCommonFlags are shared by every `dmlbench plot` subcommand.
func plotCommonFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "image `FILE` (.png, .svg or .pdf), or a directory (ending in / or existing) to write SUBCOMMAND.png into; required"},
		&cli.StringFlag{Name: "group-by", Usage: "run.json method keys forming a curve, e.g. loss,miner (default: all keys)"},
		&cli.StringFlag{Name: "title", Usage: "figure title"},
		&cli.StringFlag{Name: "source", Value: "final", Usage: "which metrics of a run: final | best"},
		&cli.BoolFlag{Name: "raw", Usage: "fraction metrics as fractions instead of percent"},
		&cli.Float64Flag{Name: "width", Value: 6, Usage: "figure width in inches (per panel)"},
		&cli.Float64Flag{Name: "height", Value: 4, Usage: "figure height in inches"},
		&cli.BoolFlag{Name: "include-unfinished", Usage: "also use runs whose status is not done"},
	}, extra...)
}

func init() {
	register(&cli.Command{
		Name:      "plot",
		Usage:     "figures from run.json files: spectra, ρ vs R@1, R@k, training curves, dim/batch sweeps",
		UsageText: "dmlbench plot spectrum|rho|recall|curves|sweep PATH... --out FIG.png [options]\n   dmlbench plot tsne --emb E.npy --labels L.npy --out FIG.png [options]",
		Description: `Every subcommand reads the run.json files under PATH... (recursively), groups runs by
the --group-by keys of run.json "method" (one curve or point per group, mean ± std over
seeds as error bars) and writes a PNG, SVG or PDF chosen by the --out extension
(gonum/plot).

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

Examples:
   dmlbench plot spectrum runs/omniglot-example --out spectrum.png --top 35
   dmlbench plot spectrum --emb out/px/emb.npy --emb runs/margin-s0/test_emb.npy --labels out/px/labels.npy --per-class --out sv.pdf
   dmlbench plot rho runs/omniglot-example --group-by loss --out rho.png
   dmlbench plot recall runs/omniglot-example --out recall.svg
   dmlbench plot curves runs/omniglot-example --group-by loss --metric R@1 --out curves.png
   dmlbench plot sweep docs/examples/omniglot/runs-dims --param embed-dim --metric R@1 --out dims.png
   dmlbench plot tsne --emb runs/margin-s0/test_emb.npy --labels runs/margin-s0/test_labels.npy --classes 10 --out tsne.png`,
		Subcommands: []*cli.Command{
			{
				Name:      "spectrum",
				Usage:     "singular-value spectra of runs or embedding files",
				UsageText: "dmlbench plot spectrum [PATH...] [--emb E.npy [--labels L.npy]]... --out FIG",
				Description: `Curves: one per method from run.json "spectrum" (mean over seeds of the normalised
spectra), plus one per --emb file (labelled with the file name). With --per-class and
--labels (one --labels per --emb, or one for all), the spectrum of each class's rows is
normalised, zero-padded and averaged over classes (Roth et al. 2020 supp. §E, Fig. 11).

Examples:
   dmlbench plot spectrum runs/omniglot-example --out spectrum.png --top 35
   dmlbench plot spectrum --emb out/px/emb.npy --emb runs/margin-s0/test_emb.npy --labels out/px/labels.npy --per-class --out sv.png`,
				Flags: plotCommonFlags(
					&cli.StringSliceFlag{Name: "emb", Usage: "embedding `FILE` (.npy or .npz:key); repeatable"},
					&cli.StringSliceFlag{Name: "labels", Usage: "labels for --emb (one, or one per --emb)"},
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

func plotOptions(c *cli.Context, title, xlabel, ylabel string) (plots.PlotOptions, error) {
	if c.String("out") == "" {
		return plots.PlotOptions{}, usagef("--out FILE (.png, .svg or .pdf) is required")
	}
	w, h := c.Float64("width"), c.Float64("height")
	if !(w > 0 && w <= 100 && h > 0 && h <= 100) {
		return plots.PlotOptions{}, usagef("--width and --height must lie in (0, 100] inches")
	}
	if s := c.String("source"); s != "final" && s != "best" {
		return plots.PlotOptions{}, usagef("--source must be final or best (got %q)", s)
	}
	if t := c.String("title"); t != "" {
		title = t
	}
	return plots.PlotOptions{Title: title, XLabel: xlabel, YLabel: ylabel,
		Width: vg.Length(w) * vg.Inch, Height: vg.Length(h) * vg.Inch}, nil
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

func plotDone(c *cli.Context, path string) error {
	fmt.Fprintln(c.App.ErrWriter, "wrote", path)
	return nil
}

// plotSave draws series with opt into the figure file and says so.
func plotSave(c *cli.Context, series []plots.Series, opt plots.PlotOptions) error {
	if err := plots.SaveSeries(plotPath(c), series, opt); err != nil {
		return err
	}
	return plotDone(c, plotPath(c))
}

func plotSpectrumAction(c *cli.Context) error {
	paths, err := reportArgs(c)
	if err != nil {
		return err
	}
	embs, labs := c.StringSlice("emb"), c.StringSlice("labels")
	if len(paths) == 0 && len(embs) == 0 {
		return usagef("spectrum needs run directories and/or --emb files")
	}
	if len(labs) > 1 && len(labs) != len(embs) {
		return usagef("give one --labels for all --emb files or one per --emb (%d vs %d)", len(labs), len(embs))
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
	var series []plots.Series
	if len(paths) > 0 {
		runs, err := reportLoad(paths, c.Bool("include-unfinished"))
		if err != nil {
			return err
		}
		s, err := plots.RunSpectra(runs, reportSplit(c.String("group-by"), ","), mode, top)
		if err != nil {
			return err
		}
		series = append(series, s...)
	}
	for i, e := range embs {
		s, err := plotEmbeddingSpectrum(c, e, labs, i)
		if err != nil {
			return err
		}
		series = append(series, s)
	}
	opt.YLabel = plots.SpectrumYLabel(mode)
	opt.LogY = true
	return plotSave(c, series, opt)
}

// plotEmbeddingSpectrum is the curve of the i-th --emb file e, labelled
// with its name: its spectrum or, with --per-class, its class-averaged
// spectrum (labels: one for all files or one per file).
func plotEmbeddingSpectrum(c *cli.Context, e string, labs []string, i int) (plots.Series, error) {
	name := strings.TrimSuffix(filepath.Base(e), filepath.Ext(e))
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
	return plotSpectrumSeries(c, e, name+" (per class)", sp.PerClass)
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
	series, err := plots.RhoPoints(runs, reportSplit(c.String("group-by"), ","), metric, c.String("source"), c.Bool("raw"), plotRho)
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
	return plotSave(c, series, opt)
}

func plotRecallAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	series, err := plots.RecallSeries(runs, reportSplit(c.String("group-by"), ","), c.String("source"), c.Bool("raw"))
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
	return plotSave(c, series, opt)
}

func plotCurvesAction(c *cli.Context) error {
	runs, err := plotRuns(c)
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, "", "", "")
	if err != nil {
		return err
	}
	if err := plots.SaveCurves(plotPath(c), runs, reportSplit(c.String("group-by"), ","), c.String("metric"), c.Bool("raw"), opt); err != nil {
		return err
	}
	return plotDone(c, plotPath(c))
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
	series, err := plots.SweepSeries(runs, reportSplit(c.String("group-by"), ","), param, metric, c.String("source"), c.Bool("raw"))
	if err != nil {
		return err
	}
	opt, err := plotOptions(c, metric+" vs "+param, param, metricUnit(metric, c.Bool("raw")))
	if err != nil {
		return err
	}
	opt.LogX = c.Bool("log-x")
	return plotSave(c, series, opt)
}
