package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
)

func init() {
	register(&cli.Command{
		Name:        "data",
		Usage:       "export data sets as .npy files (raw-pixel baselines, feature files)",
		Description: helpText("data"),
		Subcommands: []*cli.Command{{
			Name:  "export",
			Usage: "write one split as OUT/emb.npy and OUT/labels.npy (flattened pixels or features)",
			Description: `Example:
   dmlbench data export --dataset omniglot --split test --normalize --out out/demo
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
				&cli.StringFlag{Name: "out", Required: true, Usage: "output `DIR`"},
			},
			Action: func(c *cli.Context) error {
				minClass, maxClass, err := parseClassSizes(c.String("class-sizes"))
				if err != nil {
					return err
				}
				ds, err := fixtures.Load(c.String("dataset"), fixtures.Options{Size: c.Int("size"), Path: c.String("path"), Seed: c.Int64("seed"),
					Classes: c.Int("classes"), PerClass: c.Int("per-class"), Dim: c.Int("dim"), Spread: c.Float64("spread"),
					MinClass: minClass, MaxClass: maxClass, Rows: c.Int("rows")})
				if err != nil {
					return err
				}
				var s fixtures.Split
				switch c.String("split") {
				case "train":
					s = ds.Train
				case "test":
					s = ds.Test
				default:
					return usagef("--split must be train or test")
				}
				x := s.X
				if c.Bool("normalize") {
					x = fixtures.NormalizeRows(x)
				}
				dir := c.String("out")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if err := arrays.SaveNPY(filepath.Join(dir, "emb.npy"), x); err != nil {
					return err
				}
				if err := arrays.SaveLabelsNPY(filepath.Join(dir, "labels.npy"), s.Labels); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "wrote %s/emb.npy (%d×%d) and labels.npy (%d classes)\n", dir, x.Rows, x.Cols, s.NumClasses())
				return nil
			},
		}},
	})
}

// parseClassSizes reads --class-sizes MIN:MAX ("" = equal sizes: 0, 0).
func parseClassSizes(v string) (lo, hi int, err error) {
	if v == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(v, ":")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return 0, 0, usagef("--class-sizes %q: want MIN:MAX with 1 <= MIN <= MAX, e.g. 4:134", v)
	}
	return lo, hi, nil
}
