package main

import (
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
