package main

import (
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/reports"
)

func addList() {
	register(&cli.Command{
		Name:        "list",
		Usage:       "list metrics, losses, miners, samplers, regularizers, archs, backends or datasets",
		UsageText:   "dmlbench list metrics|losses|miners|samplers|regularizers|archs|backends|datasets [--long] [--format json]",
		Description: helpText("list"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "one line per entry, no wrapping"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table | json"},
		},
		Action: func(c *cli.Context) error {
			args, err := reportArgs(c) // flags may follow the kind
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return usagef("list what? metrics, losses, miners, samplers, regularizers, archs, backends or datasets")
			}
			if len(args) > 1 {
				return usagef("list takes one kind (got %q)", strings.Join(args, " "))
			}
			kind := args[0]
			format := c.String("format")
			if format != "table" && format != "json" {
				return usagef("--format must be table or json (got %q)%s", format, suggest.Hint(format, []string{"table", "json"}))
			}
			rows, ok := reports.Catalog(kind)
			if !ok {
				return usagef("unknown list %q (%s)", kind, strings.Join(reports.CatalogKinds, ", "))
			}
			return reports.WriteCatalog(c.App.Writer, rows, format, c.Bool("long"), listWidth(c.App.Writer))
		},
	})
}

// listWidth is the terminal's width, or 80 when w is not a terminal.
func listWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}
