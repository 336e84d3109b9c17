package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/plots"
)

// nameFlags name the rows, columns and curves of a table or figure:
// --rename KEY=Name (repeatable) and a names file.
func nameFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "rename", Usage: "display name of a method, row or column: `KEY=Name` (e.g. 'pixels/-=Pixels'); repeatable"},
		&cli.StringFlag{Name: "names", Usage: "names `FILE`: one KEY=Name per line (# comments); --rename overrides it"},
	}
}

// figureLabelFlags are the figure flags of names, axis labels and colours.
func figureLabelFlags() []cli.Flag {
	return append(nameFlags(),
		&cli.StringFlag{Name: "xlabel", Usage: "x axis label (default: one naming the axis)"},
		&cli.StringFlag{Name: "ylabel", Usage: "y axis label (default: one naming the axis)"},
		&cli.StringFlag{Name: "palette", Value: plots.PaletteOkabeIto, Usage: "series colours: " + strings.Join(plots.PaletteNames(), " | ") + " | #rrggbb,#rrggbb,…"},
		&cli.BoolFlag{Name: "no-run-counts", Usage: "leave the number of runs (n = …) out of the legend"},
	)
}

// readNames is --rename and --names.
func readNames(c *cli.Context) (reports.Names, error) {
	n, err := reports.ParseNames(c.StringSlice("rename"), c.String("names"))
	if err != nil {
		return nil, usagef("%v", err)
	}
	return n, nil
}
