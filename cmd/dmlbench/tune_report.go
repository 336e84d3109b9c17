package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
		return errors.New("no final results under " + tune.ResultsDir(dir))
	}
	rep, err := reports.Aggregate(loaded.Runs, opt)
	if err != nil {
		return err
	}
	rep.Notes = append(rep.Notes, tune.ReportNotes(sum, dir)...)
	var buf bytes.Buffer
	if err := reports.Write(&buf, rep, format, fo); err != nil {
		return err
	}
	return reportWriteOutput(c.App.Writer, c.String("out"), buf.Bytes())
}
