package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/reports"
)

// tuneReport prints the final-stage table of a tune directory
// (tune.Table): one row per method and embedding variant, test metrics
// over the final seeds, the chosen configurations as notes.
func tuneReport(c *cli.Context, dir, format, color string) error {
	sum, err := tune.ReadFinished(dir)
	if err != nil {
		return err
	}
	opt, err := reportOptions(c)
	if err != nil {
		return err
	}
	rep, warnings, err := tune.Table(sum, dir, opt, c.IsSet("group-by"), c.IsSet("metrics"))
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	if err != nil {
		return err
	}
	return reportWrite(c, rep, format, color, reports.FormatOptions{Standalone: c.Bool("standalone")})
}
