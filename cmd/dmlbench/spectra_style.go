package main

import (
	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports/plots"
)

// spectraFigureFlags size and colour the figure of spectra --out as plot's
// figures are.
func spectraFigureFlags() []cli.Flag {
	return append(figureSizeFlags("default (6 × 4 in) | paper (a 3.3 × 2.4 in column figure, 8 pt text)", "figure width in inches", 4), figureLabelFlags()...)
}

// spectraFigureOptions are the figure options of spectra --out; title is
// drawn unless "" (or --style paper without --title).
func spectraFigureOptions(c *cli.Context, title, caption, ylabel string) (plots.PlotOptions, error) {
	f := figureFlags(c)
	opt, err := f.Sized()
	if err != nil {
		return plots.PlotOptions{}, err
	}
	opt.Title, opt.NoTitle, opt.Caption, opt.XLabel, opt.YLabel, opt.LogY = title, title == "", caption, "index i (sorted)", ylabel, true
	return opt, f.Label(&opt)
}
