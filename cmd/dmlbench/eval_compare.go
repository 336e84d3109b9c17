package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/compare"
)

// evalFlagsNamed returns eval's flags of the given names, in eval's order
// (buildCommands adds eval first).
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

func addCompare() {
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
		Name:        "compare",
		Usage:       "paired test of two embeddings of one test set: B − A, 95 % CI and p per metric, resampling classes",
		UsageText:   "dmlbench compare --emb A.npy --emb B.npy --labels L.npy [options]",
		Description: helpText("compare"),
		Flags:       append(append(flags, evalFlagsNamed(sharedEvalFlags...)...), compareExtraFlags()...),
		Action:      compareAction,
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
		return usagef("--format must be table, json, markdown or latex (got %q)%s", format, suggest.Hint(format, []string{"table", "json", "markdown", "latex"}))
	}
	if c.Int("resamples") < 1 {
		return usagef("--resamples %d: must be ≥ 1", c.Int("resamples"))
	}
	if l := c.Float64("level"); !(l > 0 && l < 1) {
		return usagef("--level %v: must lie in (0, 1)", l)
	}
	ks, err := metrics.ParseKs(c.String("k"))
	if err != nil {
		return err
	}
	ch, err := resolveEvalChoices(c)
	if err != nil {
		return err
	}
	if len(c.StringSlice("emb")) > 2 {
		return compareMany(c, ch, ks, format)
	}
	ins, names, err := loadPairedInputs(c)
	if err != nil {
		return err
	}
	var res [2]*metrics.Result
	for i, in := range ins {
		if res[i], err = evalInput(c, ch, names[i], in, ks, true); err != nil {
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
	f := compare.Files{Emb: c.StringSlice("emb"), Labels: c.String("labels"), QueryEmb: c.StringSlice("query-emb"), GalleryEmb: c.StringSlice("gallery-emb"),
		QueryLabels: c.String("query-labels"), GalleryLabels: c.String("gallery-labels")}
	return f.Load()
}
