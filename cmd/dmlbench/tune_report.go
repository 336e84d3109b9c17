package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/reports"
)

// isTuneDir reports whether path is the output directory of `dmlbench tune`.
func isTuneDir(path string) bool {
	_, err := os.Stat(filepath.Join(path, tune.SummaryFile))
	return err == nil
}

// tuneReport prints the final-stage table of a tune directory: one row per
// method and embedding variant (separated, concatenated), test metrics
// mean ± std over the final seeds (with --ci, t-intervals), and
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
		return fmt.Errorf("no final results under %s: %s", tune.ResultsDir(dir), strings.Join(sum.Notes(dir), "; "))
	}
	rep, err := reports.Aggregate(loaded.Runs, opt)
	if err != nil {
		return err
	}
	rep.Notes = append(rep.Notes, sum.Notes(dir)...)
	for _, m := range sum.Methods {
		if m.Best < 0 {
			continue
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: best of %d %s trials t%03d, validation %s %s (mean over %d folds of the training classes); chosen %s",
			m.Name, sum.Budget, sum.Search, m.Best, sum.Objective, reports.FormatMetricUnit(sum.Objective, float64(m.BestScore)), sum.Folds, tune.FormatParams(m.BestParams)))
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
