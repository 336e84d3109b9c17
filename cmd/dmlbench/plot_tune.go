package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/reports/plots"
)

// plotTuneAction draws the best-so-far validation score against the trial
// number, one curve per method.
func plotTuneAction(c *cli.Context) error {
	arg, err := oneArg(c, "plot tune", "tune directory")
	if err != nil {
		return err
	}
	if c.String("out") == "" { // before reading the directory: the usage error comes first
		return usagef("--out FILE (.png, .pdf, .svg, .eps, .jpg or .tif) is required")
	}
	sum, err := tune.ReadSummary(arg)
	if err != nil {
		return fmt.Errorf("%s is not a tune directory: %w", arg, err)
	}
	series, names, ylabel := plots.TuneCurves(sum)
	if len(series) == 0 {
		return errors.New("no finished trial to plot in " + arg)
	}
	title := fmt.Sprintf("%s: best validation %s so far (%s search, %d folds)", sum.Dataset, sum.Objective, sum.Search, sum.Folds)
	opt, err := plotOptions(c, title, "trial", ylabel)
	if err != nil {
		return err
	}
	opt.Points, opt.Lines = true, true
	opt.Styles = plots.MethodStyles(names)
	return plotSave(c, series, opt)
}

// tunePlotCommand is `dmlbench plot tune` (a subcommand of plot).
func tunePlotCommand() *cli.Command {
	return &cli.Command{
		Name:      "tune",
		Usage:     "best-so-far validation score vs trial, one curve per method, of a tune directory",
		UsageText: "dmlbench plot tune TUNE_DIR --out FIG [options]",
		Flags:     plotFigureFlags("tune", 4),
		Action:    plotTuneAction,
	}
}
