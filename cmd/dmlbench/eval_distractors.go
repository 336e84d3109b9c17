package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports/compare"
	"github.com/dmlbench/dmlbench/reports/distractors"
)

// evalDistractorFlags draw distractor curves (docs/scale.md).
func evalDistractorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "gallery-sizes", Usage: "score the queries against nested random subsets of the gallery's distractors (items of no query's class; every relevant item kept) of these `SIZES` (e.g. 1e4,1e5,1e6): one row per size with class-bootstrap intervals (--format table|json; plot distractors draws it)"},
		&cli.Uint64Flag{Name: "gallery-seed", Usage: "with --gallery-sizes: the seed of the distractors' order"},
		&cli.IntFlag{Name: "resamples", Value: 1000, Usage: "with --gallery-sizes: class-bootstrap resamples of each interval (95 %)"},
	}
}

// evalDistractors writes the distractor curve of --gallery-sizes.
func evalDistractors(c *cli.Context, in metrics.Input, opt metrics.Options) error {
	sizes, err := distractors.ParseSizes(c.String("gallery-sizes"))
	if err != nil {
		return err
	}
	format := c.String("format")
	if format != "table" && format != "json" {
		return usagef("--gallery-sizes writes --format table or json (got %q)", format)
	}
	if c.Int("resamples") < 1 {
		return usagef("--resamples must be at least 1")
	}
	if opt.Metrics == nil {
		opt.Metrics = []string{"R@k", "MAP@R"}
	}
	curve, err := distractors.Run(c.Context, in, opt, distractors.Options{Sizes: sizes, Seed: c.Uint64("gallery-seed"),
		Interval: compare.Options{Resamples: c.Int("resamples"), Level: 0.95, Seed: 1, Average: opt.Average}})
	if err != nil {
		return err
	}
	curve.Version = Version
	if p := c.String("out"); p != "" {
		if err := atomicfile.WriteFile(p, func(w io.Writer) error { return distractors.WriteJSON(w, curve) }); err != nil {
			return err
		}
	}
	if format == "json" {
		return distractors.WriteJSON(c.App.Writer, curve)
	}
	return distractors.WriteTable(c.App.Writer, curve)
}
