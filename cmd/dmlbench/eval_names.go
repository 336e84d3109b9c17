package main

import (
	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
)

// addEvalNames gives eval --rename and --names for the rows (markdown) and
// columns (LaTeX) of its tables (buildCommands adds eval first).
func addEvalNames() {
	for _, c := range commands {
		if c.Name == "eval" {
			c.Flags = append(c.Flags, nameFlags()...)
		}
	}
}

// renameResults gives eval's results their display names.
func renameResults(c *cli.Context, results []reports.NamedResult) error {
	names, err := readNames(c)
	if err != nil {
		return err
	}
	for i := range results {
		results[i].Name = names.Name(results[i].Name)
	}
	return nil
}
