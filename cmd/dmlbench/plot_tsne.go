package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/reports/projection"
)

// plotTSNECommand is `dmlbench plot tsne` (Seidenschwarz et al. 2021 §5–6: 2-D views of
// test embeddings, coloured by class).
func plotTSNECommand() *cli.Command {
	return &cli.Command{
		Name:        "tsne",
		Usage:       "2-D t-SNE map of embeddings, coloured by class",
		UsageText:   "dmlbench plot tsne --emb E.npy --labels L.npy --out FIG [--classes 10] [--max-points 2000]",
		Description: helpText("plot-tsne"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "emb", Usage: "embeddings: `FILE`.npy or FILE.npz:key (N×D)"},
			&cli.StringFlag{Name: "labels", Usage: "labels: `FILE`.npy / .npz:key (integers) or a text file, one label per line"},
			&cli.IntFlag{Name: "classes", Value: 10, Usage: "number of classes drawn at random (0: all)"},
			&cli.IntFlag{Name: "max-points", Value: 2000, Usage: "at most this many items of the drawn classes, drawn at random (0: all)"},
			&cli.Float64Flag{Name: "perplexity", Value: 30, Usage: "t-SNE perplexity (effective number of neighbours)"},
			&cli.IntFlag{Name: "iters", Value: 1000, Usage: "gradient steps"},
			&cli.Int64Flag{Name: "seed", Usage: "seed of the class/point sample and of the initial map"},
			&cli.IntFlag{Name: "threads", DefaultText: "all cores", Usage: "worker threads"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar and no summary line"},
		}, plotFigureFlags("tsne", 5)...),
		Action: plotTSNEAction,
	}
}

func plotTSNEAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("plot tsne takes no positional arguments (got %q); use --emb and --labels", c.Args().First())
	}
	in := plots.TSNEInputs{Emb: c.String("emb"), Labels: c.String("labels"), Classes: c.Int("classes"), MaxPoints: c.Int("max-points"),
		Iters: c.Int("iters"), Perplexity: c.Float64("perplexity"), Seed: c.Int64("seed")}
	if err := in.Check(); err != nil {
		return err
	}
	fig, err := plotOptions(c, "t-SNE", "", "")
	if err != nil {
		return err
	}
	x, ids, names, smp, err := in.Load()
	if err != nil {
		return err
	}
	prog, stopProgress := stageProgress(c.Bool("quiet"))
	opt := projection.Options{Perplexity: c.Float64("perplexity"), Iters: c.Int("iters"), Seed: c.Int64("seed"), Threads: c.Int("threads")}
	if prog != nil {
		opt.Progress = func(done, total int) { prog("t-SNE", done, total) }
	}
	f, res, err := plots.TSNEMap(c.Context, x, ids, names, smp, opt, fig)
	stopProgress()
	if err != nil {
		return err
	}
	if err := plots.SavePlots(plotPath(c), []*plots.Figure{f}, fig.Width, fig.Height, fig.DPI); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "t-SNE: %d points, %d classes, KL(P‖Q) = %.4f (%s)\n", len(smp.Rows), len(smp.Classes), res.KL,
			plots.TSNECaption(len(smp.Rows), x.Rows, len(smp.Classes), smp.AllClasses, opt.Perplexity, res.KL))
	}
	return plotDone(c, plotPath(c), nil)
}
