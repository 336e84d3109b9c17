package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/tune"
)

// isTuneDir reports whether path is the output directory of `dmlbench tune`.
func isTuneDir(path string) bool {
	_, err := os.Stat(filepath.Join(path, tune.SummaryFile))
	return err == nil
}

// tuneReport prints the final-stage table of a tune directory: one row per
// method and embedding variant (separated, concatenated), test metrics
// mean ± std over the final seeds (with --ci, bootstrap intervals), and
// per method the chosen hyper-parameters and validation score as notes.
func tuneReport(c *cli.Context, dir, format, color string) error {
	fo := reports.FormatOptions{Standalone: c.Bool("standalone")}
	switch color {
	case "always":
		fo.Color = true
	case "auto":
		fo.Color = c.String("out") == "" && reportIsTTY(c.App.Writer)
	}
	sum, err := tune.ReadSummary(dir)
	if err != nil {
		return err
	}
	if !sum.Done {
		return fmt.Errorf("tune %s has not finished its final stage (see dmlbench tune status %s)", dir, sum.Spec)
	}
	opt, err := reportOptions(c)
	if err != nil {
		return err
	}
	if !c.IsSet("group-by") {
		opt.GroupBy = []string{"method", "embedding"}
	}
	if !c.IsSet("metrics") && len(sum.FinalMetrics) > 0 {
		opt.Metrics = sum.FinalMetrics
	}
	loaded, err := reports.LoadRuns([]string{tune.ResultsDir(dir)}, reports.LoadOptions{})
	if err != nil {
		return err
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	if len(loaded.Runs) == 0 {
		return errors.New("no final results under " + tune.ResultsDir(dir))
	}
	rep, err := reports.Aggregate(loaded.Runs, opt)
	if err != nil {
		return err
	}
	for _, m := range sum.Methods {
		if m.Best < 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no row: none of its %d %s trials trained successfully (see %s)",
				m.Name, sum.Budget, sum.Search, filepath.Join(dir, "trials", m.Name)))
			continue
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: best of %d %s trials t%03d, validation %s %s (mean over %d folds of the training classes); chosen %s",
			m.Name, sum.Budget, sum.Search, m.Best, sum.Objective, formatScore(float64(m.BestScore)), sum.Folds, tune.FormatParams(m.BestParams)))
	}
	if sum.SearchRepeats > 1 {
		rep.Notes = append(rep.Notes, tuneRankNote(sum))
	}
	join := "each L2-normalised, "
	if sum.Join != tune.JoinL2 { // raw, or a tune.json without the key: a raw join
		join = "as written, "
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("separated: mean over the %d fold models; concatenated: their test embeddings, %sside by side (%d·d dimensions); seeds %v",
		sum.Folds, join, sum.Folds, sum.Seeds))
	var buf bytes.Buffer
	if err := reports.Write(&buf, rep, format, fo); err != nil {
		return err
	}
	return reportWriteOutput(c.App.Writer, c.String("out"), buf.Bytes())
}

// tuneRankNote says per method its rank by best validation score in each
// of the search repeats and whether it holds across them.
func tuneRankNote(sum *tune.Summary) string {
	var parts []string
	for _, m := range sum.Methods {
		holds := "holds"
		if m.RankHolds == nil || !*m.RankHolds {
			holds = "does not hold"
		}
		ranks := make([]string, len(m.RepeatRanks))
		for i, r := range m.RepeatRanks {
			ranks[i] = strconv.Itoa(r)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", m.Name, strings.Join(ranks, ", "), holds))
	}
	return fmt.Sprintf("rank by best validation %s in each of %d searches with different search seeds: %s", sum.Objective, sum.SearchRepeats, strings.Join(parts, "; "))
}

func formatScore(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.4f", v)
}

// plotTuneAction draws the best-so-far validation score against the trial
// number, one curve per method.
func plotTuneAction(c *cli.Context) error {
	arg, err := oneArg(c, "plot tune", "tune directory")
	if err != nil {
		return err
	}
	out := c.String("out")
	if out == "" {
		return usagef("plot tune needs --out FILE (.png, .svg or .pdf)")
	}
	sum, err := tune.ReadSummary(arg)
	if err != nil {
		return fmt.Errorf("%s is not a tune directory: %w", arg, err)
	}
	scale, unit := 1.0, ""
	if reports.IsPercentMetric(sum.Objective) {
		scale, unit = 100, " (%)"
	}
	var series []plots.Series
	for _, m := range sum.Methods {
		s := plots.Series{Label: m.Name}
		for i, v := range tune.BestSoFar(m.Trials, sum.LowerIsBetter) {
			if !math.IsNaN(v) {
				s.X = append(s.X, float64(m.Trials[i].Index+1))
				s.Y = append(s.Y, scale*v)
			}
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	if len(series) == 0 {
		return errors.New("no finished trial to plot in " + arg)
	}
	title := c.String("title")
	if title == "" {
		title = fmt.Sprintf("%s: best validation %s so far (%s search, %d folds)", sum.Dataset, sum.Objective, sum.Search, sum.Folds)
	}
	opt := plots.PlotOptions{Title: title, XLabel: "trial", YLabel: "best-so-far validation " + sum.Objective + unit, Points: true, Lines: true}
	if err := plots.SaveSeries(out, series, opt); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "wrote %s\n", out)
	return nil
}

// tunePlotCommand is `dmlbench plot tune` (a subcommand of plot).
var tunePlotCommand = &cli.Command{
	Name:      "tune",
	Usage:     "best-so-far validation score vs trial, one curve per method, of a tune directory",
	UsageText: "dmlbench plot tune TUNE_DIR --out FILE",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "image `FILE` (.png, .svg or .pdf); required"},
		&cli.StringFlag{Name: "title", Usage: "figure title"},
	},
	Action: plotTuneAction,
}
