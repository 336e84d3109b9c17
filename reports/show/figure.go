package show

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	_ "image/gif" // decoders of the pictures FileImages inlines
	_ "image/jpeg"
	_ "image/png"
	"io"
	"strings"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/webp"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/reports/plots"
)

// Figure sizes of FigureOptions.Width.
const (
	// ColumnWidth is one column of a two-column paper, inches.
	ColumnWidth = 3.3
	// PageWidth is the text width of a two-column paper (figure*), inches.
	PageWidth = 6.9
)

// FigureOptions size the retrieval figure.
type FigureOptions struct {
	// Width of the figure (0: ColumnWidth inches); the height follows
	// from the number of queries.
	Width vg.Length
	// DPI of PNG files (0: plots.DefaultDPI).
	DPI int
}

// Figure colours: Okabe & Ito 2008's bluish green and vermillion, apart
// under every common colour-vision deficiency; wrong retrievals are also
// framed with a dashed line, so the figure reads in grey print.
var (
	correctColor = color.RGBA{0, 158, 115, 255}
	wrongColor   = color.RGBA{213, 94, 0, 255}
)

// figureQueries are the queries the figure shows: the worst, then the
// random or chosen ones.
func (p *Page) figureQueries() []Query {
	return append(append([]Query(nil), p.Worst...), p.Random...)
}

// SaveFigure draws the page's queries as the retrieval figure of a paper
// and writes it to path (.pdf, .png or .svg by extension): one row per
// query, the query then its top-k retrievals nearest first, each framed
// green (solid) when of the query's class and red (dashed) otherwise. With
// pictures the cells are the pictures and nothing else; without, each
// cell names the class and, for a retrieval, its distance (three decimals
// throughout).
func (p *Page) SaveFigure(path string, fo FigureOptions) error {
	format, err := plots.FormatOf(path)
	if err != nil {
		return err
	}
	qs := p.figureQueries()
	if len(qs) == 0 {
		return errors.New("show: no query to draw")
	}
	if fo.Width == 0 {
		fo.Width = ColumnWidth * vg.Inch
	}
	if fo.DPI == 0 {
		fo.DPI = plots.DefaultDPI
	}
	cols := 1
	for _, q := range qs {
		cols = max(cols, 1+len(q.Hits))
	}
	// The cells: a gap of a quarter cell after the query, a pad of 8 %
	// around each.
	cell := fo.Width / (vg.Length(cols) + 0.25)
	pad := cell * 0.08
	h := vg.Length(len(qs)) * cell
	c, err := plots.NewCanvas(format, fo.Width, h, fo.DPI)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	for i, q := range qs {
		y := h - vg.Length(i+1)*cell
		if err := drawCell(dc, vg.Point{X: 0, Y: y}, cell, pad, q.Img, q.Label, "", color.Black, false); err != nil {
			return fmt.Errorf("show: query %d: %w", q.Row, err)
		}
		for j, hit := range q.Hits {
			x := cell*1.25 + vg.Length(j)*cell
			col, dashed := color.Color(correctColor), false
			if !hit.Correct {
				col, dashed = wrongColor, true
			}
			if err := drawCell(dc, vg.Point{X: x, Y: y}, cell, pad, hit.Img, hit.Label, hit.Dist, col, dashed); err != nil {
				return fmt.Errorf("show: query %d, rank %d: %w", q.Row, j+1, err)
			}
		}
	}
	return atomicfile.WriteFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}

// drawCell draws one cell at min: the picture (or the label and distance
// as text) inside a frame of colour col.
func drawCell(c draw.Canvas, min vg.Point, size, pad vg.Length, img template.URL, label, dist string, col color.Color, dashed bool) error {
	lw := max(size*0.045, vg.Points(0.8))
	inner := vg.Rectangle{Min: vg.Point{X: min.X + pad, Y: min.Y + pad}, Max: vg.Point{X: min.X + size - pad, Y: min.Y + size - pad}}
	if img != "" {
		im, err := decodeDataURI(img)
		if err != nil {
			return err
		}
		c.DrawImage(inner, im)
	} else {
		drawCellText(c, inner, label, dist)
	}
	st := draw.LineStyle{Color: col, Width: lw}
	if dashed {
		st.Dashes = []vg.Length{lw * 2.5, lw * 1.5}
	}
	frame := vg.Rectangle{Min: vg.Point{X: inner.Min.X - lw/2, Y: inner.Min.Y - lw/2}, Max: vg.Point{X: inner.Max.X + lw/2, Y: inner.Max.Y + lw/2}}
	c.StrokeLines(st, []vg.Point{frame.Min, {X: frame.Max.X, Y: frame.Min.Y}, frame.Max, {X: frame.Min.X, Y: frame.Max.Y}, frame.Min})
	return nil
}

// drawCellText writes the label and the distance centred in r, in a size
// that fits r's width.
func drawCellText(c draw.Canvas, r vg.Rectangle, label, dist string) {
	w := r.Max.X - r.Min.X
	size := min(vg.Points(8), w/5)
	face := font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
	sty := draw.TextStyle{Color: color.Black, Font: face.Font, Handler: text.Plain{Fonts: font.DefaultCache}, XAlign: draw.XCenter, YAlign: draw.YCenter}
	for _, s := range []string{label, dist} {
		for sty.Width(s) > w*0.92 && sty.Font.Size > vg.Points(3) {
			sty.Font.Size *= 0.9
		}
	}
	mid := vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}
	if dist == "" {
		c.FillText(sty, mid, label)
		return
	}
	c.FillText(sty, vg.Point{X: mid.X, Y: mid.Y + sty.Font.Size*0.6}, label)
	c.FillText(sty, vg.Point{X: mid.X, Y: mid.Y - sty.Font.Size*0.6}, dist)
}

// decodeDataURI decodes a "data:image/…;base64,…" URI (as Images give).
func decodeDataURI(u template.URL) (image.Image, error) {
	s := string(u)
	k := strings.Index(s, ";base64,")
	if !strings.HasPrefix(s, "data:") || k < 0 {
		return nil, fmt.Errorf("not a base64 data URI")
	}
	b, err := base64.StdEncoding.DecodeString(s[k+len(";base64,"):])
	if err != nil {
		return nil, err
	}
	im, _, err := image.Decode(bytes.NewReader(b))
	return im, err
}
