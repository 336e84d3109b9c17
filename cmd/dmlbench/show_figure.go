package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot/vg"

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
	format := c.String("format")
	switch format {
	case "html":
		if c.IsSet("queries") || c.IsSet("figure-width") {
			return nil, fo, false, usagef("--queries and --figure-width are for --format pdf, png or svg")
		}
		return nil, fo, false, nil
	case "pdf", "png", "svg":
	default:
		return nil, fo, false, usagef("--format must be html, pdf, png or svg (got %q)", format)
	}
	if !strings.HasSuffix(strings.ToLower(c.String("out")), "."+format) {
		return nil, fo, false, usagef("--format %s writes a .%s file (got --out %s)", format, format, c.String("out"))
	}
	if s := c.String("queries"); s != "" {
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v < 0 {
				return nil, fo, false, usagef("--queries: %q is not a row number", f)
			}
			queries = append(queries, v)
		}
	}
	switch w := c.String("figure-width"); w {
	case "column":
		fo.Width = show.ColumnWidth * vg.Inch
	case "page":
		fo.Width = show.PageWidth * vg.Inch
	default:
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, fo, false, usagef("--figure-width must be column, page or inches in (0, 100] (got %q)", w)
		}
		fo.Width = vg.Length(v) * vg.Inch
	}
	if d := c.Int("dpi"); d < 10 || d > 2400 {
		return nil, fo, false, usagef("--dpi must lie in [10, 2400] (got %d)", d)
	}
	fo.DPI = c.Int("dpi")
	return queries, fo, true, nil
}

// showWriteFigure writes p's retrieval figure.
func showWriteFigure(c *cli.Context, p *show.Page, fo show.FigureOptions) error {
	if err := p.SaveFigure(c.String("out"), fo); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d queries, top %d each\n", c.String("out"), len(p.Worst)+len(p.Random), p.K)
	return nil
}
