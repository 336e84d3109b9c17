package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/reports/projection"
)

// plotTSNECommand is `dmlbench plot tsne` (Seidenschwarz et al. 2021 §5–6: 2-D views of
// test embeddings, coloured by class).
var plotTSNECommand = &cli.Command{
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

func plotTSNEAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("plot tsne takes no positional arguments (got %q); use --emb and --labels", c.Args().First())
	}
	switch {
	case c.String("emb") == "" || c.String("labels") == "":
		return usagef("--emb and --labels are required (see dmlbench plot tsne --help)")
	case c.Int("classes") < 0 || c.Int("max-points") < 0:
		return usagef("--classes and --max-points must be ≥ 0")
	case c.Int("iters") < 1:
		return usagef("--iters must be ≥ 1")
	case !(c.Float64("perplexity") > 0):
		return usagef("--perplexity must be > 0")
	}
	fig, err := plotOptions(c, "t-SNE", "", "")
	if err != nil {
		return err
	}
	x, err := arrays.LoadEmbeddings(c.String("emb"))
	if err != nil {
		return err
	}
	ids, names, err := arrays.LoadLabels(c.String("labels"))
	if err != nil {
		return err
	}
	if err := arrays.CheckPair(x, ids, c.String("emb"), c.String("labels")); err != nil {
		return err
	}
	smp := projection.SampleRows(ids, c.Int("classes"), c.Int("max-points"), c.Int64("seed"))
	if perp := c.Float64("perplexity"); perp >= float64(len(smp.Rows)-1) {
		return usagef("--perplexity %g needs more than %g points; the sample has %d (raise --classes / --max-points or lower --perplexity)", perp, perp+1, len(smp.Rows))
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
