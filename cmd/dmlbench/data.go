package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
)

func addData() {
	register(&cli.Command{
		Name:        "data",
		Usage:       "export data sets as .npy files (raw-pixel baselines, feature files)",
		Description: helpText("data"),
		Subcommands: []*cli.Command{{
			Name:  "export",
			Usage: "write one split as OUT/emb.npy and OUT/labels.npy (flattened pixels or features)",
			Description: `Example:
   dmlbench data export --dataset omniglot --split test --normalize --out out/demo
   dmlbench data export --dataset omniglot --dir data     # for tune's dataset: dir:data
   dmlbench eval --emb out/demo/emb.npy --labels out/demo/labels.npy --metrics R@1,MAP@R`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "dataset", Value: "omniglot", Usage: "data set (see dmlbench list datasets)"},
				&cli.StringFlag{Name: "split", Value: "test", Usage: "train | test"},
				&cli.IntFlag{Name: "size", DefaultText: "per data set", Usage: "image side after downsampling"},
				&cli.StringFlag{Name: "path", Usage: "data location override (emoji .npz, fashion-mnist directory)"},
				&cli.BoolFlag{Name: "normalize", Usage: "L2-normalise rows"},
				&cli.Int64Flag{Name: "seed", Usage: "seed of synthetic data sets"},
				&cli.IntFlag{Name: "classes", DefaultText: "64", Usage: "synthetic: classes in total, half train / half test"},
				&cli.IntFlag{Name: "per-class", DefaultText: "32", Usage: "synthetic: samples per class"},
				&cli.IntFlag{Name: "dim", DefaultText: "32", Usage: "synthetic: dimension"},
				&cli.Float64Flag{Name: "spread", DefaultText: "0.15", Usage: "synthetic: per-coordinate noise σ"},
				&cli.StringFlag{Name: "class-sizes", Usage: "synthetic: unequal class sizes `MIN:MAX` (a long tail of large classes) instead of --per-class"},
				&cli.IntFlag{Name: "rows", DefaultText: "classes × per-class", Usage: "synthetic with --class-sizes: samples in all, shared by the halves in proportion to their classes"},
				&cli.StringFlag{Name: "out", Usage: "output `DIR` of one split (emb.npy, labels.npy)"},
				&cli.StringFlag{Name: "dir", Usage: "output `DIR` of both splits in the dir: layout of tune and run (train_emb.npy, train_labels.npy, test_emb.npy, test_labels.npy); replaces --out and --split"},
			},
			Action: func(c *cli.Context) error {
				minClass, maxClass, err := fixtures.ParseClassSizes(c.String("class-sizes"))
				if err != nil {
					return usageError{Err: err}
				}
				ds, err := fixtures.Load(c.String("dataset"), fixtures.Options{Size: c.Int("size"), Path: c.String("path"), Seed: c.Int64("seed"),
					Classes: c.Int("classes"), PerClass: c.Int("per-class"), Dim: c.Int("dim"), Spread: c.Float64("spread"),
					MinClass: minClass, MaxClass: maxClass, Rows: c.Int("rows")})
				if err != nil {
					return err
				}
				if d := c.String("dir"); d != "" {
					if c.IsSet("out") || c.IsSet("split") {
						return usagef("--dir writes both splits; drop --out and --split")
					}
					if err := fixtures.ExportDir(ds, d, c.Bool("normalize")); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "wrote %s/{train,test}_{emb,labels}.npy (%d and %d rows, %d and %d classes)\n", d, ds.Train.X.Rows, ds.Test.X.Rows, ds.Train.NumClasses(), ds.Test.NumClasses())
					return nil
				}
				if c.String("out") == "" {
					return usagef("give --out DIR (one split) or --dir DIR (both splits)")
				}
				s, ok := ds.Split(c.String("split"))
				if !ok {
					return usagef("--split must be train or test")
				}
				dir := c.String("out")
				rows, cols, err := fixtures.Export(s, dir, c.Bool("normalize"))
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "wrote %s/emb.npy (%d×%d) and labels.npy (%d classes)\n", dir, rows, cols, s.NumClasses())
				return nil
			},
		}},
	})
}
