package main

import (
	"github.com/urfave/cli/v2"

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
	p, err := show.Request{Worst: c.Int("worst"), Random: c.Int("random"), Top: c.Int("top"), RandomSet: c.IsSet("random"),
		Seed: c.Uint64("sample-seed"), Distance: c.String("distance"), Compat: c.String("compat"), Figure: showFigureFlagValues(c),
		Dataset: c.String("dataset"), Images: c.String("images"), Split: c.String("split"), Size: c.Int("size"),
		Emb: c.String("emb"), QueryEmb: c.String("query-emb"), GalleryEmb: c.String("gallery-emb"), Out: c.String("out")}.Prepare()
	if err != nil {
		return err
	}
	in, err := loadEvalInput(c, c.String("emb"))
	if err != nil {
		return err
	}
	if err := classNames(c, c.String("emb"), &in); err != nil {
		return err
	}
	return p.Write(c.Context, in, c.App.Writer)
}
