package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports/show"
)

func init() {
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
		Name:      "show",
		Usage:     "an HTML page of what the embeddings retrieve: the worst and random queries with their top retrievals",
		UsageText: "dmlbench show --emb E.npy --labels L.npy --out page.html [--dataset omniglot]",
		Description: `One self-contained HTML file (pictures inlined as data URIs, no script): the queries of
lowest AP@R and a random sample, each with its nearest gallery items marked ✓ (same class)
or ✗, its AP@R and its class's R@1. With --dataset or --images the rows' pictures,
otherwise labels and distances.

Examples:
   dmlbench data export --dataset omniglot --split test --normalize --out out/demo
   dmlbench show --emb out/demo/emb.npy --labels out/demo/labels.npy --dataset omniglot --distance cosine --out out/demo/show.html
   dmlbench show --emb docs/examples/features/test_emb.npy --labels docs/examples/features/test_labels.npy --out show.html`,
		Flags:  append(append(flags, evalFlagsNamed("labels", "query-emb", "query-labels", "gallery-emb", "gallery-labels", "distance", "compat")...), showFigureFlags()...),
		Action: showAction,
	})
}

func showAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("show takes no positional arguments (got %q)", c.Args().First())
	}
	for _, n := range []string{"worst", "random", "top"} {
		if c.Int(n) < 0 || (n == "top" && c.Int(n) < 1) {
			return usagef("--%s %d: must be ≥ %d", n, c.Int(n), map[bool]int{true: 1, false: 0}[n == "top"])
		}
	}
	if c.Int("worst")+c.Int("random") == 0 {
		return usagef("--worst 0 and --random 0 show no query")
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
	imgs, err := showImages(c, in)
	if err != nil {
		return err
	}
	title := "dmlbench show: " + c.String("emb")
	if in.Gallery != nil {
		title = "dmlbench show: " + c.String("query-emb") + " against " + c.String("gallery-emb")
	}
	p, err := show.Build(c.Context, in, show.Options{Worst: c.Int("worst"), Random: random, K: c.Int("top"), Queries: queries,
		Seed: c.Uint64("sample-seed"), Distance: c.String("distance"), Convention: metrics.Convention(c.String("compat")), Title: title}, imgs, imgs)
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

// showImages are the rows' pictures from --dataset or --images (nil:
// none).
func showImages(c *cli.Context, in metrics.Input) (show.Images, error) {
	ds, list := c.String("dataset"), c.String("images")
	switch {
	case ds == "" && list == "":
		return nil, nil
	case ds != "" && list != "":
		return nil, usagef("--dataset and --images both give the pictures; use one")
	case in.Gallery != nil:
		return nil, usagef("pictures (--dataset, --images) are for one set searched leave-one-out; with --query-*/--gallery-* the page shows labels and distances")
	}
	if list == "" && strings.HasPrefix(ds, "dir:") {
		list = filepath.Join(strings.TrimPrefix(ds, "dir:"), c.String("split")+"_images.txt")
	}
	if list != "" {
		paths, err := show.ReadImageList(list)
		if err != nil {
			return nil, err
		}
		if len(paths) != in.Emb.Rows {
			return nil, fmt.Errorf("%s lists %d images but the embeddings have %d rows", list, len(paths), in.Emb.Rows)
		}
		return show.FileImages(paths)
	}
	d, err := fixtures.Load(ds, fixtures.Options{Size: c.Int("size")})
	if err != nil {
		return nil, err
	}
	split := d.Test
	switch c.String("split") {
	case "train":
		split = d.Train
	case "test":
	default:
		return nil, usagef("--split must be train or test (got %q)", c.String("split"))
	}
	if split.X.Rows != in.Emb.Rows {
		return nil, fmt.Errorf("--dataset %s --split %s has %d rows but the embeddings have %d: the rows must be the split's, in order", ds, c.String("split"), split.X.Rows, in.Emb.Rows)
	}
	return show.PixelImages(split.X, d.Shape, ds == "omniglot") // Omniglot stores ink as 1
}
