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
	w, h, sty, err := plots.FigureSize(c.String("style"), c.Float64("width"), c.Float64("height"), c.IsSet("width"), c.IsSet("height"), c.Int("dpi"))
	if err != nil {
		return plots.PlotOptions{}, usagef("%v", err)
	}
	opt := plots.PlotOptions{Title: title, NoTitle: title == "", Caption: caption, XLabel: "index i (sorted)", YLabel: ylabel, LogY: true,
		Width: w, Height: h, DPI: c.Int("dpi"), Style: sty}
	return opt, applyFigureLabels(c, &opt)
}
