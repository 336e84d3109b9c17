package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports/show"
)

// showFigureFlags: the retrieval figure of a paper instead of the page.
func showFigureFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "html", Usage: "html (the page) | pdf | png | svg (the retrieval figure of a paper; --out's extension must match)"},
		&cli.StringFlag{Name: "queries", Usage: "figure: the query rows shown, `i,j,k` (default: --worst diverse worst queries, one per class)"},
		&cli.StringFlag{Name: "figure-width", Value: "column", Usage: "figure: column (3.3 in) | page (6.9 in, figure*) | a width in inches"},
		&cli.IntFlag{Name: "dpi", Value: 300, Usage: "figure: resolution of .png"},
	}
}

// showFigureOptions parses the figure flags; figure is false for the page.
func showFigureOptions(c *cli.Context) (queries []int, fo show.FigureOptions, figure bool, err error) {
	return show.FigureFlags{Format: c.String("format"), Out: c.String("out"), Queries: c.String("queries"), Width: c.String("figure-width"),
		QueriesSet: c.IsSet("queries"), WidthSet: c.IsSet("figure-width"), DPI: c.Int("dpi")}.Parse()
}

// showWriteFigure writes p's retrieval figure.
func showWriteFigure(c *cli.Context, p *show.Page, fo show.FigureOptions) error {
	if err := p.SaveFigure(c.String("out"), fo); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d queries, top %d each\n", c.String("out"), len(p.Worst)+len(p.Random), p.K)
	return nil
}
