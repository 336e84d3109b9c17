package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
)

func init() {
	listExtensions = append(listExtensions, listDatasets)
	register(&cli.Command{
		Name:  "data",
		Usage: "export data sets as .npy files (raw-pixel baselines, feature files)",
		Description: `Examples:
   dmlbench data export --dataset omniglot --split test --out out/omniglot-test
   dmlbench data export --dataset emoji --split test --normalize --out out/emoji-test
   # SOP-shaped synthetic test split (60 500 × 128, 12 100 classes × 5) for timing eval:
   dmlbench data export --dataset synthetic --classes 24200 --per-class 5 --dim 128 --spread 0.1 --normalize --out out/sop-like
   # the same with SOP's test-set shape (60 502 rows, 11 316 classes of 2–9) and noisy classes:
   dmlbench data export --dataset synthetic --classes 22632 --rows 121004 --class-sizes 2:9 --dim 128 --spread 0.1 --normalize --out out/sop-noisy
   dmlbench list datasets`,
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

func listDatasets(kind string, w io.Writer) (bool, error) {
	if kind != "datasets" {
		return false, nil
	}
	fmt.Fprintln(w, "DATASET\tDESCRIPTION")
	for _, n := range fixtures.Names() {
		fmt.Fprintf(w, "%s\t%s\n", n, fixtures.Describe(n))
	}
	return true, nil
}
