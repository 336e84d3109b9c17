package main

import (
	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/metrics"
)

// eval's flags for the standard protocols and pytorch-metric-learning
// parity (Musgrave et al. 2020's library, AccuracyCalculator v2.8.1).
func evalPMLFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "protocol", Usage: "standard benchmark preset: cub | cars | sop | inshop (sets the recall ks; inshop takes --query-*/--gallery-*)"},
		&cli.StringFlag{Name: "query-rows", Usage: "`IDX`.npy: integer rows of --emb that are the queries; every row is the gallery, each query's own row excluded by index (PML's ref_includes_query)"},
		&cli.StringFlag{Name: "average", Value: "query", Usage: "how k-NN metrics pool queries: query (mean over queries) | per-class (mean over classes of each class's mean; PML's avg_of_avgs)"},
		&cli.BoolFlag{Name: "per-class", Usage: "also report every class's k-NN metrics (JSON \"per_class\", a second table otherwise)"},
		&cli.StringFlag{Name: "pml-k", Usage: "with --compat pml: PML's explicit k (`K` or max_bin_count), the window of MRR and mean_average_precision; non-standard: when a class is larger, MAP@R sums over the first K and still divides by R, R-Precision divides by K (warned)"},
	}
}

// pmlOptions reads --average, --per-class and --pml-k into opt.
func pmlOptions(c *cli.Context, opt *metrics.Options) (err error) {
	if opt.Average, err = metrics.ParseAverage(c.String("average")); err != nil {
		return err
	}
	opt.PerClass = c.Bool("per-class")
	if c.IsSet("pml-k") {
		opt.PMLK, err = metrics.ParsePMLK(c.String("pml-k"), opt.Convention)
	}
	return err
}

// queryRows reads --query-rows (one-set mode only).
func queryRows(c *cli.Context, in *metrics.Input) (err error) {
	spec := c.String("query-rows")
	if spec == "" {
		return nil
	}
	if in.Gallery != nil {
		return usagef("--query-rows selects queries inside --emb; with --query-*/--gallery-* every query row is a query")
	}
	in.QueryRows, err = arrays.QueryRows(spec, in.Emb.Rows)
	return err
}

// classNames fills in.ClassNames with the original label of every id, for
// --per-class, --per-query and the commands beside eval.
func classNames(c *cli.Context, emb string, in *metrics.Input) (err error) {
	if !c.Bool("per-class") && c.String("per-query") == "" && c.Command.Name == "eval" {
		return nil
	}
	in.ClassNames, err = evalFiles(c, emb).ClassNames(in.Labels, in.GalleryLabels)
	return err
}
