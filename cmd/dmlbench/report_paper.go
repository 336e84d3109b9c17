package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
)

// reportPaperFlags set a report up for a paper: names, LaTeX layout,
// digits, the multiple-comparison correction.
func reportPaperFlags() []cli.Flag {
	return append(nameFlags(),
		&cli.StringFlag{Name: "layout", Value: reports.LayoutOneColumn, Usage: "latex: onecolumn (each table fits a one-column article) | twocolumn (table* across both columns)"},
		&cli.BoolFlag{Name: "inline-std", Usage: "latex: mean ± std on one line instead of the std under the mean"},
		&cli.IntFlag{Name: "decimals", Value: -1, Usage: "decimals of every metric", DefaultText: "2 for percentages, 4 otherwise"},
		&cli.StringFlag{Name: "correction", Value: reports.CorrectionHolm, Usage: "p-values against the baseline adjusted for the table's tests: holm (family-wise error) | bh (Benjamini–Hochberg false discovery rate) | none"},
	)
}

// reportPaperOptions adds the paper flags to opt and fo.
func reportPaperOptions(c *cli.Context, opt *reports.Options, fo *reports.FormatOptions) error {
	var err error
	if fo.Layout, err = reports.CheckLayout(c.String("layout")); err != nil {
		return usagef("--layout: %v", err)
	}
	fo.InlineStd = c.Bool("inline-std")
	if c.IsSet("decimals") {
		d := c.Int("decimals")
		if d < 0 || d > 10 {
			return usagef("--decimals must lie in [0, 10] (got %d)", d)
		}
		opt.Decimals = &d
	}
	if opt.Correction, err = reports.ParseCorrection(c.String("correction")); err != nil {
		return usagef("--correction: %v", err)
	}
	return nil
}

// renameReport gives rep's rows their --rename/--names display names and
// warns of names that match no row.
func renameReport(c *cli.Context, rep *reports.Report, errw io.Writer) error {
	names, err := readNames(c)
	if err != nil {
		return err
	}
	for _, k := range rep.Rename(names) {
		fmt.Fprintf(errw, "warning: --rename %q matches no row\n", k)
	}
	return nil
}
