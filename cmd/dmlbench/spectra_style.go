package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot/vg"

	"github.com/dmlbench/dmlbench/reports/plots"
)

// spectraFigureFlags size and colour the figure of spectra --out as plot's
// figures are.
func spectraFigureFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "style", Value: plots.StyleDefault, Usage: "default (6 × 4 in) | paper (a 3.3 × 2.4 in column figure, 8 pt text)"},
		&cli.Float64Flag{Name: "width", Value: 6, Usage: "figure width in inches; --style paper: " + fmt.Sprint(plots.PaperWidth)},
		&cli.Float64Flag{Name: "height", Value: 4, Usage: "figure height in inches; --style paper: " + fmt.Sprint(plots.PaperHeight)},
		&cli.IntFlag{Name: "dpi", Value: plots.DefaultDPI, Usage: "resolution of .png, .jpg and .tif files"},
	}, figureLabelFlags()...)
}

// spectraFigureOptions are the figure options of spectra --out; title is
// drawn unless "" (or --style paper without --title).
func spectraFigureOptions(c *cli.Context, title, caption, ylabel string) (plots.PlotOptions, error) {
	w, h := c.Float64("width"), c.Float64("height")
	if c.String("style") == plots.StylePaper {
		if !c.IsSet("width") {
			w = plots.PaperWidth
		}
		if !c.IsSet("height") {
			h = plots.PaperHeight
		}
	}
	if !(w > 0 && w <= 100 && h > 0 && h <= 100) {
		return plots.PlotOptions{}, usagef("--width and --height must lie in (0, 100] inches")
	}
	if d := c.Int("dpi"); d < 10 || d > 2400 {
		return plots.PlotOptions{}, usagef("--dpi must lie in [10, 2400] (got %d)", d)
	}
	sty, err := plots.StyleFor(c.String("style"), vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch)
	if err != nil {
		return plots.PlotOptions{}, usagef("--style must be %s or %s (got %q)", plots.StyleDefault, plots.StylePaper, c.String("style"))
	}
	opt := plots.PlotOptions{Title: title, NoTitle: title == "", Caption: caption, XLabel: "index i (sorted)", YLabel: ylabel, LogY: true,
		Width: vg.Length(w) * vg.Inch, Height: vg.Length(h) * vg.Inch, DPI: c.Int("dpi"), Style: sty}
	return opt, applyFigureLabels(c, &opt)
}
