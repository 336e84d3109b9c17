package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports/plots"
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
				Action: plotRunsAction,
			},
			{
				Name:        "rho",
				Usage:       "ρ (spectral decay) against a metric, one point per method",
				UsageText:   "dmlbench plot rho PATH... --out FIG [--metric R@1]",
				Description: "Examples:\n   dmlbench plot rho runs/omniglot-example --group-by loss --out rho.png\n   dmlbench plot rho runs/ --metric NMI --out rho_nmi.pdf",
				Flags:       plotCommonFlags(&cli.StringFlag{Name: "metric", Value: "R@1", Usage: "y-axis metric"}),
				Action:      plotRunsAction,
			},
			{
				Name:        "recall",
				Usage:       "R@k against k per method",
				UsageText:   "dmlbench plot recall PATH... --out FIG",
				Description: "Examples:\n   dmlbench plot recall runs/omniglot-example --group-by loss --out recall.png",
				Flags:       plotCommonFlags(),
				Action:      plotRunsAction,
			},
			{
				Name:        "curves",
				Usage:       "training loss and test metric per epoch",
				UsageText:   "dmlbench plot curves PATH... --out FIG [--metric R@1]",
				Description: "Examples:\n   dmlbench plot curves runs/omniglot-example --group-by loss --out curves.png",
				Flags:       plotCommonFlags(&cli.StringFlag{Name: "metric", Value: "R@1", Usage: "test metric of the right panel"}),
				Action:      plotRunsAction,
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
				Action: plotRunsAction,
			},
			plotTSNECommand(),
			tunePlotCommand(),
		},
	})
}

// figureFlags are the figure's settings as given (plots.FigureFlags).
func figureFlags(c *cli.Context) plots.FigureFlags {
	return plots.FigureFlags{Out: c.String("out"), Title: c.String("title"), Caption: c.String("caption"),
		XLabel: c.String("xlabel"), YLabel: c.String("ylabel"),
		TitleSet: c.IsSet("title"), XLabelSet: c.IsSet("xlabel"), YLabelSet: c.IsSet("ylabel"),
		Style: c.String("style"), Width: c.Float64("width"), Height: c.Float64("height"),
		WidthSet: c.IsSet("width"), HeightSet: c.IsSet("height"), DPI: c.Int("dpi"),
		Rename: c.StringSlice("rename"), NamesFile: c.String("names"), Palette: c.String("palette"), NoRunCounts: c.Bool("no-run-counts")}
}

// plotOptions checks the figure flags and returns the options of a
// figure whose default title, x and y labels are given.
func plotOptions(c *cli.Context, title, xlabel, ylabel string) (plots.PlotOptions, error) {
	return figureFlags(c).Options(title, xlabel, ylabel, nil)
}

// plotPath is where the figure goes (plots.FigurePath).
func plotPath(c *cli.Context) string { return plots.FigurePath(c.String("out"), c.Command.Name) }

// plotDone writes the figure's warnings and where it went.
func plotDone(c *cli.Context, d plots.Drawn) error {
	for _, w := range d.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	if d.Path != "" {
		fmt.Fprintln(c.App.ErrWriter, "wrote", d.Path)
	}
	return nil
}

// plotSave draws series with opt into the figure file and says so.
func plotSave(c *cli.Context, series []plots.Series, opt plots.PlotOptions) error {
	d, err := plots.Save(plotPath(c), series, opt)
	if err != nil {
		return err
	}
	return plotDone(c, d)
}

// plotRunsAction is plot spectrum, rho, recall, curves and sweep.
func plotRunsAction(c *cli.Context) error {
	paths, err := reportArgs(c)
	if err != nil {
		return err
	}
	p := plots.RunPlot{Kind: c.Command.Name, Paths: paths, Figure: figureFlags(c),
		GroupBy: c.String("group-by"), Source: c.String("source"), Raw: c.Bool("raw"), IncludeUnfinished: c.Bool("include-unfinished"),
		Metric: c.String("metric"), Param: c.String("param"), LogX: c.Bool("log-x"),
		Spectrum: plots.SpectrumInputs{Embs: c.StringSlice("emb"), Labels: c.StringSlice("labels"), Names: c.StringSlice("name"),
			PerClass: c.Bool("per-class"), Normalize: c.String("normalize"), Top: c.Int("top")}}
	d, err := p.Draw()
	if err != nil {
		if len(d.Warnings) > 0 {
			plotDone(c, plots.Drawn{Warnings: d.Warnings})
		}
		return err
	}
	return plotDone(c, d)
}
