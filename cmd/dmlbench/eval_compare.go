package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/compare"
)

// evalFlagsNamed returns eval's flags of the given names, in eval's order.
// eval.go's init has registered eval by now: files initialise in name
// order.
func evalFlagsNamed(names ...string) []cli.Flag {
	for _, c := range commands {
		if c.Name != "eval" {
			continue
		}
		var out []cli.Flag
		for _, f := range c.Flags {
			if slices.Contains(names, f.Names()[0]) {
				out = append(out, f)
			}
		}
		if len(out) != len(names) {
			panic(fmt.Sprintf("evalFlagsNamed: eval has %d of the flags %v", len(out), names))
		}
		return out
	}
	panic("evalFlagsNamed: eval is not registered yet")
}

// sharedEvalFlags are the eval options that compare and show take as
// they are: labels, metrics, distance, convention, backend, ….
var sharedEvalFlags = []string{"labels", "query-labels", "gallery-labels", "metrics", "k", "distance", "binarize",
	"clusters", "clustering", "eps", "min-samples", "seed", "threads", "backend", "compat", "quiet",
	"protocol", "query-rows", "average", "pml-k"}

func init() {
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "emb", Usage: "embeddings A, then B (then C, …: each compared with A, p-values max-T adjusted), of the same items: `FILE`.npy, FILE.npz:key or FILE.pt[:key]"},
		&cli.StringSliceFlag{Name: "query-emb", Usage: "query embeddings of A, then of B (with --gallery-emb twice)"},
		&cli.StringSliceFlag{Name: "gallery-emb", Usage: "gallery embeddings of A, then of B"},
		&cli.StringFlag{Name: "format", Value: "table", Usage: "table | json | markdown | latex"},
		&cli.IntFlag{Name: "resamples", Value: compare.DefaultResamples, Usage: "bootstrap resamples and sign-flip permutations, each over classes"},
		&cli.Uint64Flag{Name: "resample-seed", Value: 1, Usage: "seed of the resampling (same seed, same interval and p)"},
		&cli.Float64Flag{Name: "level", Value: 0.95, Usage: "confidence level of the interval"},
	}
	register(&cli.Command{
		Name:      "compare",
		Usage:     "paired test of two embeddings of one test set: B − A, 95 % CI and p per metric, resampling classes",
		UsageText: "dmlbench compare --emb A.npy --emb B.npy --labels L.npy [options]",
		Description: `Both embeddings are scored as eval scores them (same metrics, conventions and
inputs); every k-NN metric's per-query values are then paired query by query. The
interval is a percentile bootstrap over classes, the p-value a sign-flip permutation
test over classes (queries of one class share their positives: the class is the unit).
Clustering and whole-embedding metrics (NMI, F1, AMI, rho, dist_ratio) have no
per-query values: their A, B and B − A are shown, not tested (docs/compare.md).
Under the table: the minimum difference detectable at this size (α = 0.05, 80 % power).

Examples:
   dmlbench compare --emb out/px/emb.npy --emb runs/margin-s0/test_emb.npy --labels out/px/labels.npy
   dmlbench compare --emb docs/examples/features/test_emb.npy --emb docs/examples/features/test_emb.npy --labels docs/examples/features/test_labels.npy --metrics R@1,MAP@R --format json`,
		Flags:  append(append(flags, evalFlagsNamed(sharedEvalFlags...)...), compareExtraFlags()...),
		Action: compareAction,
	})
}

func compareAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("compare takes no positional arguments (got %q); use --emb twice and --labels", c.Args().First())
	}
	if err := checkEvalNumbers(c); err != nil {
		return err
	}
	format := c.String("format")
	if !slices.Contains(reports.ResultFormats, format) {
		return usagef("--format must be table, json, markdown or latex (got %q)", format)
	}
	if c.Int("resamples") < 1 {
		return usagef("--resamples %d: must be ≥ 1", c.Int("resamples"))
	}
	if l := c.Float64("level"); !(l > 0 && l < 1) {
		return usagef("--level %v: must lie in (0, 1)", l)
	}
	ks, err := parseInts(c.String("k"))
	if err != nil {
		return usagef("--k: %v", err)
	}
	if len(c.StringSlice("emb")) > 2 {
		return compareMany(c, ks, format)
	}
	ins, names, err := loadPairedInputs(c)
	if err != nil {
		return err
	}
	var res [2]*metrics.Result
	for i, in := range ins {
		if res[i], err = evalInput(c, names[i], in, ks, true); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
	}
	opt := compare.Options{Resamples: c.Int("resamples"), Seed: c.Uint64("resample-seed"), Level: c.Float64("level"), Average: res[0].Average}
	tests, err := compare.Compare(res[0], res[1], metrics.Keys(res[0].Metrics), opt)
	if err != nil {
		return err
	}
	rep := &compare.Report{A: names[0], B: names[1], Queries: res[0].Queries, Classes: res[0].Classes,
		Resamples: opt.Resamples, Seed: opt.Seed, Level: opt.Level, Average: string(opt.Average), Tests: tests}
	return compareWrite(c, c.App.Writer, rep, format)
}

// loadPairedInputs reads A's and B's inputs: --emb twice against --labels,
// or --query-emb and --gallery-emb twice each against the query and
// gallery labels.
func loadPairedInputs(c *cli.Context) ([2]metrics.Input, [2]string, error) {
	var ins [2]metrics.Input
	var names [2]string
	embs, qs, gs := c.StringSlice("emb"), c.StringSlice("query-emb"), c.StringSlice("gallery-emb")
	qg := len(qs) > 0 || len(gs) > 0 || c.String("query-labels") != "" || c.String("gallery-labels") != ""
	switch {
	case qg && len(embs) > 0:
		return ins, names, usagef("use either --emb/--labels or --query-*/--gallery-*, not both")
	case qg && (len(qs) != 2 || len(gs) != 2 || c.String("query-labels") == "" || c.String("gallery-labels") == ""):
		return ins, names, usagef("query/gallery mode needs --query-emb and --gallery-emb twice each (A, then B), --query-labels and --gallery-labels")
	case !qg && (len(embs) != 2 || c.String("labels") == ""):
		return ins, names, usagef("compare needs --emb twice (A, then B) and --labels (got %d --emb)", len(embs))
	}
	for i := range 2 {
		if !qg {
			x, y, err := arrays.LoadPair(embs[i], c.String("labels"), false)
			if err != nil {
				return ins, names, err
			}
			ins[i], names[i] = metrics.Input{Emb: x, Labels: y}, embs[i]
			continue
		}
		x, _, err := arrays.LoadPair(qs[i], c.String("query-labels"), true)
		if err != nil {
			return ins, names, err
		}
		g, _, err := arrays.LoadPair(gs[i], c.String("gallery-labels"), false)
		if err != nil {
			return ins, names, err
		}
		if g.Cols != x.Cols {
			return ins, names, fmt.Errorf("%s has dimension %d but %s has dimension %d", qs[i], x.Cols, gs[i], g.Cols)
		}
		ids, err := arrays.JointLabels(c.String("query-labels"), c.String("gallery-labels"))
		if err != nil {
			return ins, names, err
		}
		ins[i], names[i] = metrics.Input{Emb: x, Labels: ids[0], Gallery: &g, GalleryLabels: ids[1]}, qs[i]
	}
	return ins, names, nil
}
