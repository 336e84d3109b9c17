package show

import (
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
)

// FigureFlags are show's figure flags as given: the output format
// (html: the page; pdf, png, svg: the retrieval figure), the file, the
// query rows, the width and the resolution.
type FigureFlags struct {
	Format, Out, Queries, Width string
	QueriesSet, WidthSet        bool
	DPI                         int
}

// Parse checks the flags (usage errors) and returns the figure's query
// rows and options; figure is false for the page.
func (f FigureFlags) Parse() (queries []int, fo FigureOptions, figure bool, err error) {
	switch f.Format {
	case "html":
		if f.QueriesSet || f.WidthSet {
			return nil, fo, false, usage.Errorf("--queries and --figure-width are for --format pdf, png or svg")
		}
		return nil, fo, false, nil
	case "pdf", "png", "svg":
	default:
		return nil, fo, false, usage.Errorf("--format must be html, pdf, png or svg (got %q)%s", f.Format, suggest.Hint(f.Format, []string{"html", "pdf", "png", "svg"}))
	}
	if !strings.HasSuffix(strings.ToLower(f.Out), "."+f.Format) {
		return nil, fo, false, usage.Errorf("--format %s writes a .%s file (got --out %s)", f.Format, f.Format, f.Out)
	}
	if f.Queries != "" {
		for _, s := range strings.Split(f.Queries, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || v < 0 {
				return nil, fo, false, usage.Errorf("--queries: %q is not a row number", s)
			}
			queries = append(queries, v)
		}
	}
	switch f.Width {
	case "column":
		fo.Width = ColumnWidth * vg.Inch
	case "page":
		fo.Width = PageWidth * vg.Inch
	default:
		v, err := strconv.ParseFloat(f.Width, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, fo, false, usage.Errorf("--figure-width must be column, page or inches in (0, 100] (got %q)", f.Width)
		}
		fo.Width = vg.Length(v) * vg.Inch
	}
	if f.DPI < 10 || f.DPI > 2400 {
		return nil, fo, false, usage.Errorf("--dpi must lie in [10, 2400] (got %d)", f.DPI)
	}
	fo.DPI = f.DPI
	return queries, fo, true, nil
}

// CheckCounts refuses negative query counts, fewer than one retrieval
// per query, and a page with no query (usage errors).
func CheckCounts(worst, random, top int) error {
	for _, c := range []struct {
		flag     string
		v, least int
	}{{"worst", worst, 0}, {"random", random, 0}, {"top", top, 1}} {
		if c.v < c.least {
			return usage.Errorf("--%s %d: must be ≥ %d", c.flag, c.v, c.least)
		}
	}
	if worst+random == 0 {
		return usage.Errorf("--worst 0 and --random 0 show no query")
	}
	return nil
}

// ImagesFor are the pictures of rows rows from a data set's split (ds,
// split, side size) or an image list file; nil when neither is given.
// Pictures are for one set searched leave-one-out (not queryGallery).
func ImagesFor(ds, list, split string, size, rows int, queryGallery bool) (Images, error) {
	switch {
	case ds == "" && list == "":
		return nil, nil
	case ds != "" && list != "":
		return nil, usage.Errorf("--dataset and --images both give the pictures; use one")
	case queryGallery:
		return nil, usage.Errorf("pictures (--dataset, --images) are for one set searched leave-one-out; with --query-*/--gallery-* the page shows labels and distances")
	}
	if list == "" && !strings.HasPrefix(ds, "dir:") && split != "train" && split != "test" {
		return nil, usage.Errorf("--split must be train or test (got %q)%s", split, suggest.Hint(split, []string{"train", "test"}))
	}
	return RowImages(ds, list, split, size, rows)
}
