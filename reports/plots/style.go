package plots

import (
	"errors"
	"fmt"
	"image/color"
	"sort"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Styles that StyleFor knows.
const (
	StyleDefault = "default"
	// StylePaper is a one-column figure of a two-column paper: 3.3 × 2.4
	// inches unless given, 8 pt text.
	StylePaper = "paper"
)

// PaperWidth and PaperHeight are the size of a StylePaper figure, inches.
const PaperWidth, PaperHeight = 3.3, 2.4

// DefaultDPI is the resolution of raster figures (PNG, JPEG, TIFF).
const DefaultDPI = 300

// Style is the look of a figure, scaled from the body text size Font:
// tick labels, legend and caption one point smaller, the title one point
// larger, lines and markers in proportion.
type Style struct {
	Font vg.Length
}

// StyleFor is the style named name ("" is StyleDefault) for a panel of
// w × h. The default follows the panel size: 10 pt at 6 × 4 inches (as
// matplotlib's 10 pt at 6.4 × 4.8), scaled with the smaller side ratio and
// kept within [7, 12] pt; the paper style is 8 pt.
func StyleFor(name string, w, h vg.Length) (Style, error) {
	switch name {
	case StyleDefault, "":
		if w == 0 {
			w = 6 * vg.Inch
		}
		if h == 0 {
			h = 4 * vg.Inch
		}
		s := 10 * min(float64(w/(6*vg.Inch)), float64(h/(4*vg.Inch)))
		return Style{Font: vg.Points(min(12, max(7, s)))}, nil
	case StylePaper:
		return Style{Font: vg.Points(8)}, nil
	}
	return Style{}, fmt.Errorf("reports: unknown figure style %q: want %s or %s", name, StyleDefault, StylePaper)
}

// scale is the factor of the style's lengths against the 10 pt default.
func (s Style) scale() vg.Length { return s.Font / vg.Points(10) }

// lineWidth, markerRadius, small and large are the style's line width,
// marker radius, small text (ticks, legend, caption) and title size.
func (s Style) lineWidth() vg.Length    { return vg.Points(1.5) * s.scale() }
func (s Style) markerRadius() vg.Length { return vg.Points(3) * s.scale() }
func (s Style) small() vg.Length        { return s.Font - vg.Points(1) }
func (s Style) large() vg.Length        { return s.Font + vg.Points(1) }

// sans is the typeface of every text of a figure (matplotlib's figures
// are sans-serif too).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textHandler draws every text of a figure: plain text with _{…} and ^{…}
// as sub- and superscripts.
var textHandler = scriptText{Fonts: font.DefaultCache}

// apply gives p's texts, ticks and legend the style's fonts and sizes.
func (s Style) apply(p *plot.Plot) {
	set := func(st *text.Style, size vg.Length) {
		f := sans
		f.Size = size
		st.Font = f
		st.Handler = textHandler
	}
	set((&p.Title.TextStyle), s.large())
	p.Title.Padding = s.Font / 2
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		set((&a.Label.TextStyle), s.Font)
		set((&a.Tick.Label), s.small())
		a.Tick.Length = s.Font * 0.35
		a.Padding = s.Font * 0.25
		a.Label.Padding = s.Font * 0.25
		a.LineStyle.Width = vg.Points(0.8) * s.scale()
		a.Tick.LineStyle.Width = vg.Points(0.8) * s.scale()
	}
	set((&p.Legend.TextStyle), s.small())
	p.Legend.ThumbnailWidth = s.Font * 2.2
	p.Legend.Padding = s.Font * 0.15
}

// MethodStyles maps the names of a directory's methods to their style
// index: the names sorted, so a method keeps its colour, marker and dash
// in every figure drawn from that directory, whichever subset of the
// methods a figure shows.
func MethodStyles(names []string) map[string]int {
	u := append([]string(nil), names...)
	sort.Strings(u)
	m := map[string]int{}
	for _, n := range u {
		if _, ok := m[n]; !ok {
			m[n] = len(m)
		}
	}
	return m
}

// seriesShape and seriesDashes are the marker and dash pattern of style
// index i (its colour is the figure's Palette's).
func seriesShape(i int) draw.GlyphDrawer { return plotutil.Shape(i) }
func seriesDashes(i int) []vg.Length     { return plotutil.Dashes(i) }
func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	// Premultiplied, as image/color.RGBA wants.
	f := func(v uint32) uint8 { return uint8(uint32(v>>8) * uint32(a) / 255) }
	return color.RGBA{f(r), f(g), f(b), a}
}

// FigureSize checks the size, style and resolution a command was given
// (the --width, --height, --style and --dpi flags): width and height in
// inches, where those not set (wSet, hSet false) take the paper style's
// size under StylePaper. It returns the size and the style's look.
func FigureSize(style string, w, h float64, wSet, hSet bool, dpi int) (vg.Length, vg.Length, Style, error) {
	if style == StylePaper {
		if !wSet {
			w = PaperWidth
		}
		if !hSet {
			h = PaperHeight
		}
	}
	if !(w > 0 && w <= 100 && h > 0 && h <= 100) {
		return 0, 0, Style{}, errors.New("--width and --height must lie in (0, 100] inches")
	}
	sty, err := StyleFor(style, vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch)
	if err != nil {
		return 0, 0, Style{}, fmt.Errorf("--style must be %s or %s (got %q)%s", StyleDefault, StylePaper, style, suggest.Hint(style, []string{StyleDefault, StylePaper}))
	}
	if dpi < 10 || dpi > 2400 {
		return 0, 0, Style{}, fmt.Errorf("--dpi must lie in [10, 2400] (got %d)", dpi)
	}
	return vg.Length(w) * vg.Inch, vg.Length(h) * vg.Inch, sty, nil
}
