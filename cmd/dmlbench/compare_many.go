package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/compare"
)

// compareExtraFlags: names, the LaTeX layout.
func compareExtraFlags() []cli.Flag {
	return append(nameFlags(),
		&cli.StringFlag{Name: "layout", Value: reports.LayoutOneColumn, Usage: "latex: onecolumn | twocolumn (table* across both columns)"})
}

// compareWrite writes one comparison in format, A and B under their
// display names.
func compareWrite(c *cli.Context, w io.Writer, rep *compare.Report, format string) error {
	names, err := readNames(c)
	if err != nil {
		return err
	}
	rep.A, rep.B = names.Name(rep.A), names.Name(rep.B)
	return compare.Write(w, rep, format, c.String("layout"))
}

// compareMany compares each --emb after the first with the first, the
// p-values adjusted together by the class-level sign-flip max-T.
func compareMany(c *cli.Context, ch evalChoices, ks []int, format string) error {
	embs := c.StringSlice("emb")
	if c.String("labels") == "" {
		return usagef("compare needs --labels")
	}
	var res []*metrics.Result
	for _, e := range embs {
		x, y, err := arrays.LoadPair(e, c.String("labels"), false)
		if err != nil {
			return err
		}
		r, err := evalInput(c, ch, e, metrics.Input{Emb: x, Labels: y}, ks, true)
		if err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
		res = append(res, r)
	}
	opt := compare.Options{Resamples: c.Int("resamples"), Seed: c.Uint64("resample-seed"), Level: c.Float64("level"), Average: res[0].Average}
	all, err := compare.CompareMany(res, metrics.Keys(res[0].Metrics), opt)
	if err != nil {
		return err
	}
	for i, tests := range all {
		if i > 0 && format != "json" {
			fmt.Fprintln(c.App.Writer)
		}
		rep := &compare.Report{A: embs[0], B: embs[i+1], Queries: res[0].Queries, Classes: res[0].Classes,
			Resamples: opt.Resamples, Seed: opt.Seed, Level: opt.Level, Average: string(opt.Average), Tests: tests, Family: len(embs) - 1,
			Label: fmt.Sprintf("tab:compare-%d", i+1)}
		if err := compareWrite(c, c.App.Writer, rep, format); err != nil {
			return err
		}
	}
	return nil
}
