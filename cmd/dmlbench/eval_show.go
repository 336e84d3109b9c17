package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports/show"
)

func addShow() {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "emb", Usage: "embeddings: `FILE`.npy, FILE.npz:key or FILE.pt[:key]"},
		&cli.StringFlag{Name: "out", Required: true, Usage: "the HTML page to write: `FILE`.html (one file, pictures inlined)"},
		&cli.IntFlag{Name: "worst", Value: 8, Usage: "the queries of lowest AP@R shown"},
		&cli.IntFlag{Name: "random", Value: 8, Usage: "random queries shown"},
		&cli.IntFlag{Name: "top", Value: 8, Usage: "retrievals shown per query"},
		&cli.Uint64Flag{Name: "sample-seed", Value: 1, Usage: "seed of the random sample"},
		&cli.StringFlag{Name: "dataset", Usage: "pictures of the rows: omniglot | fashion-mnist | emoji | dir:PATH (PATH/SPLIT_images.txt); the rows of --emb are the split's, in order"},
		&cli.StringFlag{Name: "split", Value: "test", Usage: "with --dataset: train | test"},
		&cli.IntFlag{Name: "size", DefaultText: "per data set", Usage: "with --dataset: image side"},
		&cli.StringFlag{Name: "images", Usage: "pictures of the rows: a text `FILE`, one image path per row of --emb (relative to FILE's folder)"},
	}
	register(&cli.Command{
		Name:        "show",
		Usage:       "an HTML page of what the embeddings retrieve: the worst and random queries with their top retrievals",
		UsageText:   "dmlbench show --emb E.npy --labels L.npy --out page.html [--dataset omniglot]",
		Description: helpText("show"),
		Flags:       append(append(flags, evalFlagsNamed("labels", "query-emb", "query-labels", "gallery-emb", "gallery-labels", "distance", "compat")...), showFigureFlags()...),
		Action:      showAction,
	})
}

func showAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("show takes no positional arguments (got %q)", c.Args().First())
	}
	if err := show.CheckCounts(c.Int("worst"), c.Int("random"), c.Int("top")); err != nil {
		return err
	}
	conv, err := metrics.ParseConvention(c.String("compat"))
	if err != nil {
		return usagef("--compat %q: %v", c.String("compat"), err)
	}
	if err := metrics.CheckDistance(c.String("distance")); err != nil {
		return usagef("--distance: %v", err)
	}
	queries, fo, figure, err := showFigureOptions(c)
	if err != nil {
		return err
	}
	random := c.Int("random")
	if figure && (queries != nil || !c.IsSet("random")) {
		random = 0 // a figure shows the chosen or the worst queries
	}
	in, err := loadEvalInput(c, c.String("emb"))
	if err != nil {
		return err
	}
	if err := classNames(c, c.String("emb"), &in); err != nil {
		return err
	}
	imgs, err := show.ImagesFor(c.String("dataset"), c.String("images"), c.String("split"), c.Int("size"), in.Emb.Rows, in.Gallery != nil)
	if err != nil {
		return err
	}
	title := "dmlbench show: " + c.String("emb")
	if in.Gallery != nil {
		title = "dmlbench show: " + c.String("query-emb") + " against " + c.String("gallery-emb")
	}
	p, err := show.Build(c.Context, in, show.Options{Worst: c.Int("worst"), Random: random, K: c.Int("top"), Queries: queries,
		Seed: c.Uint64("sample-seed"), Distance: c.String("distance"), Convention: conv, Title: title}, imgs, imgs)
	if err != nil {
		return err
	}
	if figure {
		return showWriteFigure(c, p, fo)
	}
	if err := atomicfile.WriteFile(c.String("out"), func(w io.Writer) error { return p.WriteHTML(w) }); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d worst and %d random queries, top %d each\n", c.String("out"), len(p.Worst), len(p.Random), p.K)
	return nil
}
