package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/reports"
)

// Series is one labelled curve with optional symmetric error bars
// (standard deviation over seeds) in either direction.
type Series struct {
	Label string
	// Key names the method for its style (MethodStyles); "" is Label.
	Key  string
	X, Y []float64
	// YErr and XErr are half-widths (nil: no bars).
	YErr, XErr []float64
	// N is the number of runs behind each point (nil if not aggregated).
	N []int
}

// key is the name that picks s's style.
func (s Series) key() string {
	if s.Key != "" {
		return s.Key
	}
	return s.Label
}

// PlotOptions describe one figure.
type PlotOptions struct {
	Title, XLabel, YLabel string
	// NoTitle draws no title (Title is then ignored).
	NoTitle bool
	// LogX uses a base-2 logarithmic x axis with ticks at the data's x
	// values (dimension and batch-size sweeps, R@k with k = 1, 2, 4, …).
	LogX bool
	// LogY uses a base-10 logarithmic y axis (singular-value spectra).
	LogY bool
	// Points draws markers (left out on curves of more than 25 points
	// when Lines is also set); Lines joins points (both default on when
	// neither is set).
	Points, Lines bool
	// PointLabels writes each series' label next to its points instead
	// of a legend.
	PointLabels bool
	// Caption is a line under the x axis label, drawn only when given.
	Caption string
	// Width and Height of the figure (default 6 × 4 inches); DPI the
	// resolution of PNG, JPEG and TIFF files (default DefaultDPI).
	Width, Height vg.Length
	DPI           int
	// Style sizes the texts, lines and markers (zero: StyleFor the
	// default style at Width × Height).
	Style Style
	// Styles maps method names (Series.Key) to their style index
	// (MethodStyles); series not in it take the indices after its.
	Styles map[string]int
	// Palette colours the series (nil: Okabe–Ito, PaletteNamed).
	Palette Palette
	// Names maps series labels to the names the legend shows
	// (reports.Names); labels it does not name are shown as they are.
	Names reports.Names
	// NoRunCounts leaves the number of runs (n = …) out of the legend
	// entries of aggregated series.
	NoRunCounts bool
}

// style is opt's style, derived from the panel size when not set.
func (opt PlotOptions) style() Style {
	if opt.Style.Font > 0 {
		return opt.Style
	}
	s, _ := StyleFor(StyleDefault, opt.Width, opt.Height)
	return s
}

// Figure is one plot with its legend, placed when the figure is saved.
type Figure struct {
	Plot *plot.Plot
	// Notes name the points that could not be drawn (±Inf): a warning
	// for the user, not a text in the figure.
	Notes  []string
	legend *legendPlacer
}

// formats that Save understands, by file extension.
var plotFormats = map[string]bool{"png": true, "svg": true, "pdf": true, "eps": true, "jpg": true, "jpeg": true, "tif": true, "tiff": true}

func plotFormat(path string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if !plotFormats[ext] {
		return "", fmt.Errorf("reports: cannot tell the image format of %q: use .png, .pdf, .svg, .eps, .jpg or .tif", path)
	}
	return ext, nil
}

// xyErr adapts a Series to gonum/plot's XYer, YErrorer and XErrorer.
type xyErr struct {
	s   Series
	idx []int // points kept (positive where a log axis needs it)
}

func (e xyErr) Len() int                        { return len(e.idx) }
func (e xyErr) XY(i int) (float64, float64)     { return e.s.X[e.idx[i]], e.s.Y[e.idx[i]] }
func (e xyErr) Label(i int) string              { return e.s.Label }
func (e xyErr) YError(i int) (float64, float64) { v := e.s.YErr[e.idx[i]]; return v, v }
func (e xyErr) XError(i int) (float64, float64) { v := e.s.XErr[e.idx[i]]; return v, v }

// NewPlot builds a figure of series: each series' drawable points become
// layers (a ± band or error bars, line, markers, point labels) in its
// method's style, then the axes get their scales and ticks, the ranges a
// margin, and the legend goes last (legendPlacer).
func NewPlot(series []Series, opt PlotOptions) (*Figure, error) {
	if len(series) == 0 {
		return nil, errors.New("reports: nothing to plot")
	}
	if !opt.Points && !opt.Lines {
		opt.Points, opt.Lines = true, true
	}
	sty := opt.style()
	p := plot.New()
	sty.apply(p)
	if !opt.NoTitle {
		p.Title.Text = opt.Title
	}
	p.X.Label.Text = opt.XLabel
	p.Y.Label.Text = opt.YLabel
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 225}, color.Gray{Y: 225}
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.5)*sty.scale(), vg.Points(0.5)*sty.scale()
	p.Add(grid)
	lp := &legendPlacer{legend: p.Legend, inset: sty.Font / 2, margin: sty.markerRadius()}
	p.Legend = plot.NewLegend()
	st := plotStats{allIntX: true}
	styles := seriesStyles(series, opt.Styles)
	for i, s := range series {
		s.Key = s.key()
		s.Label = opt.Names.Name(s.Label)
		d, err := st.drawable(s, opt)
		if err != nil {
			return nil, err
		}
		if len(d.idx) == 0 {
			continue
		}
		st.npts += len(d.idx)
		thumbs, obst, err := addSeriesLayers(p, d, styles[i], opt, sty)
		if err != nil {
			return nil, err
		}
		lp.obstacles = append(lp.obstacles, obst...)
		if s.Label != "" && !opt.PointLabels {
			lp.add(s.Label+runCount(s.N, opt.NoRunCounts), thumbs...)
		}
	}
	if st.npts == 0 {
		return nil, errors.New("reports: no finite (and, on log axes, positive) points to plot")
	}
	setAxes(p, opt, st)
	captionLine(p, opt.Caption)
	makeRoom(p, opt)
	p.Add(lp)
	return &Figure{Plot: p, Notes: st.infinite, legend: lp}, nil
}

// seriesStyles is the style index of each series: its key's index in
// known, or the next free index in the order of first appearance.
func seriesStyles(series []Series, known map[string]int) []int {
	next := 0
	for _, v := range known {
		next = max(next, v+1)
	}
	extra := map[string]int{}
	out := make([]int, len(series))
	for i, s := range series {
		k := s.key()
		if v, ok := known[k]; ok {
			out[i] = v
			continue
		}
		if _, ok := extra[k]; !ok {
			extra[k] = next
			next++
		}
		out[i] = extra[k]
	}
	return out
}

// runCount is the legend's note of how many runs a curve averages:
// " (n = 3)", " (n = 2–3)" when points average different numbers, ""
// for a series that is not aggregated (N nil) or when off.
func runCount(n []int, off bool) string {
	if off || len(n) == 0 {
		return ""
	}
	lo, hi := slices.Min(n), slices.Max(n)
	if lo == hi {
		return fmt.Sprintf(" (n = %d)", lo)
	}
	return fmt.Sprintf(" (n = %d–%d)", lo, hi)
}

// captionLine adds caption as a line under p's x axis label.
func captionLine(p *plot.Plot, caption string) {
	if caption == "" {
		return
	}
	if p.X.Label.Text == "" {
		p.X.Label.Text = caption
		return
	}
	p.X.Label.Text += "\n" + caption
}

// plotStats is what NewPlot's per-series stage gathers for the axes.
type plotStats struct {
	xticks   []float64 // x of every drawn point
	infinite []string  // notes on points at ±Inf, which cannot be drawn
	npts     int
	allIntX  bool // every drawn x is an integer
}

// drawable checks s and returns it with the points that can be drawn: finite,
// and positive on a log axis. Error bars that are NaN or would reach below
// zero on a log axis are dropped (set to 0 in a copy).
func (st *plotStats) drawable(s Series, opt PlotOptions) (xyErr, error) {
	if len(s.X) != len(s.Y) || (s.YErr != nil && len(s.YErr) != len(s.Y)) || (s.XErr != nil && len(s.XErr) != len(s.X)) {
		return xyErr{}, fmt.Errorf("reports: series %q has mismatched lengths", s.Label)
	}
	if s.YErr != nil {
		s.YErr = append([]float64(nil), s.YErr...)
	}
	if s.XErr != nil {
		s.XErr = append([]float64(nil), s.XErr...)
	}
	d := xyErr{s: s}
	for j := range s.X {
		x, y := s.X[j], s.Y[j]
		if math.IsInf(x, 0) || math.IsInf(y, 0) {
			st.infinite = appendOnce(st.infinite, infiniteNote(s.Label, x, y, opt))
			continue
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			continue
		}
		if (opt.LogX && x <= 0) || (opt.LogY && y <= 0) {
			continue
		}
		if s.YErr != nil && (math.IsNaN(s.YErr[j]) || (opt.LogY && y-s.YErr[j] <= 0)) {
			s.YErr[j] = 0
		}
		if s.XErr != nil && (math.IsNaN(s.XErr[j]) || (opt.LogX && x-s.XErr[j] <= 0)) {
			s.XErr[j] = 0
		}
		d.idx = append(d.idx, j)
		st.xticks = append(st.xticks, x)
		st.allIntX = st.allIntX && x == math.Trunc(x)
	}
	return d, nil
}

// bandMin is the number of points from which a curve's spread is a ±
// band instead of error bars (a spectrum, a long training curve): caps on
// every point would hide the curve.
const bandMin = 12

// bandAlpha is the opacity of a ± band: 35%, since matplotlib's 20% of a
// light colour (sky blue, yellow) vanishes on white and in print.
const bandAlpha = 89

// addSeriesLayers adds a series' layers to p in style index i: a ± band or
// error bars, a line in its dash pattern and markers in its shape, all in
// its colour, and point labels. It returns the line and markers for the
// legend and what it drew as polylines in data coordinates, which the
// legend must not cover.
func addSeriesLayers(p *plot.Plot, d xyErr, i int, opt PlotOptions, sty Style) ([]plot.Thumbnailer, []plotter.XYs, error) {
	col := opt.Palette.color(i)
	pts := make(plotter.XYs, d.Len())
	for j := range pts {
		pts[j].X, pts[j].Y = d.XY(j)
	}
	var obst []plotter.XYs
	if opt.Lines && len(d.idx) > 1 {
		obst = append(obst, pts)
	} else {
		for _, q := range pts {
			obst = append(obst, plotter.XYs{q})
		}
	}
	band := opt.Lines && d.s.YErr != nil && len(d.idx) >= bandMin
	if band {
		o, err := addBand(p, d, col)
		if err != nil {
			return nil, nil, err
		}
		obst = append(obst, o...)
	} else {
		o, err := addErrorBars(p, d, col, sty)
		if err != nil {
			return nil, nil, err
		}
		obst = append(obst, o...)
	}
	var thumbs []plot.Thumbnailer
	if opt.Lines && len(d.idx) > 1 {
		line, err := plotter.NewLine(d)
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		line.Color = col
		line.Width = sty.lineWidth()
		// Each series its own dash pattern as well as its own colour, so
		// curves that coincide stay distinguishable (and in grey print).
		line.Dashes = seriesDashes(i)
		for k := range line.Dashes {
			line.Dashes[k] *= sty.scale()
		}
		p.Add(line)
		thumbs = append(thumbs, line)
	}
	if opt.Points || len(d.idx) == 1 {
		// Dense curves (spectra) get a marker every few points only, the
		// start shifted per series so coinciding curves show both marks.
		md := d
		if opt.Lines && len(d.idx) > 25 {
			md = xyErr{s: d.s, idx: thinIndex(d.idx, 12, i)}
		}
		sc, err := plotter.NewScatter(md)
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		sc.Color = col
		sc.Shape = seriesShape(i)
		sc.Radius = sty.markerRadius()
		p.Add(sc)
		thumbs = append(thumbs, sc)
	}
	if opt.PointLabels {
		lb, err := plotter.NewLabels(d)
		if err != nil {
			return nil, nil, fmt.Errorf("reports: %w", err)
		}
		for k := range lb.TextStyle {
			lb.TextStyle[k].Font = sans
			lb.TextStyle[k].Font.Size = sty.small()
			lb.TextStyle[k].Handler = textHandler
			lb.TextStyle[k].Color = col
		}
		lb.Offset = vg.Point{X: sty.Font * 0.4, Y: sty.Font * 0.3}
		p.Add(lb)
	}
	return thumbs, obst, nil
}

// addBand adds the ± band y ± YErr of d, the series' colour at bandAlpha,
// and returns its outline.
func addBand(p *plot.Plot, d xyErr, col color.Color) ([]plotter.XYs, error) {
	n := d.Len()
	ring := make(plotter.XYs, 0, 2*n)
	var sides []plotter.XYs
	for j := range n {
		x, y := d.XY(j)
		lo, _ := d.YError(j)
		ring = append(ring, plotter.XY{X: x, Y: y + lo})
		sides = append(sides, plotter.XYs{{X: x, Y: y - lo}, {X: x, Y: y + lo}})
	}
	for j := n - 1; j >= 0; j-- {
		x, y := d.XY(j)
		lo, _ := d.YError(j)
		ring = append(ring, plotter.XY{X: x, Y: y - lo})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	poly.Color = withAlpha(col, bandAlpha)
	poly.LineStyle.Width = 0
	p.Add(poly)
	return append(sides, ring), nil
}

// addErrorBars adds d's y and x error bars (those it has) in the series'
// colour, so each bar reads as its series', and returns them as segments.
func addErrorBars(p *plot.Plot, d xyErr, col color.Color, sty Style) ([]plotter.XYs, error) {
	var segs []plotter.XYs
	if d.s.YErr != nil {
		eb, err := plotter.NewYErrorBars(d)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		eb.Color = col
		eb.LineStyle.Width = sty.lineWidth() / 1.5
		eb.CapWidth = sty.markerRadius() * 2
		p.Add(eb)
		for j := range d.Len() {
			x, y := d.XY(j)
			e, _ := d.YError(j)
			segs = append(segs, plotter.XYs{{X: x, Y: y - e}, {X: x, Y: y + e}})
		}
	}
	if d.s.XErr != nil {
		eb, err := plotter.NewXErrorBars(d)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		eb.Color = col
		eb.LineStyle.Width = sty.lineWidth() / 1.5
		eb.CapWidth = sty.markerRadius() * 2
		p.Add(eb)
		for j := range d.Len() {
			x, y := d.XY(j)
			e, _ := d.XError(j)
			segs = append(segs, plotter.XYs{{X: x - e, Y: y}, {X: x + e, Y: y}})
		}
	}
	return segs, nil
}

// setAxes gives p its log scales and tick markers: labelled decades on a
// log y axis, the data's x values on a log x axis, round values on linear
// axes (whole numbers only when every x is one).
func setAxes(p *plot.Plot, opt PlotOptions, st plotStats) {
	if opt.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	} else {
		p.Y.Tick.Marker = roundTicks{}
	}
	if opt.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = valueTicks(st.xticks)
	} else {
		// Epochs, indices, dimensions: no tick at 2.5.
		p.X.Tick.Marker = roundTicks{integer: st.allIntX}
	}
}

// makeRoom widens p's ranges: a 5% margin on each side of every axis
// (matplotlib's default; of the logarithm on log axes), so no marker is
// cut at the frame, and room right of the rightmost points for point
// labels. The legend takes no room: legendPlacer finds a free corner or
// puts it outside.
func makeRoom(p *plot.Plot, opt PlotOptions) {
	addAxisMargins(&p.X, opt.LogX, 0.05)
	addAxisMargins(&p.Y, opt.LogY, 0.05)
	if opt.PointLabels {
		if span := p.X.Max - p.X.Min; span > 0 && !opt.LogX {
			p.X.Min -= 0.05 * span
			p.X.Max += 0.2 * span
		}
		if span := p.Y.Max - p.Y.Min; span > 0 && !opt.LogY {
			p.Y.Min -= 0.05 * span
			p.Y.Max += 0.08 * span
		}
	}
}

// addAxisMargins is addMargins on a linear axis and on the logarithm of
// a log axis (whose range is positive).
func addAxisMargins(a *plot.Axis, log bool, frac float64) {
	if !log {
		addMargins(a, frac)
		return
	}
	if a.Min > 0 && a.Max > a.Min {
		f := math.Pow(a.Max/a.Min, frac)
		a.Min, a.Max = a.Min/f, a.Max*f
	}
}

// addMargins widens a linear axis by frac of its span on both sides (or
// by ±0.5 when the span is 0).
func addMargins(a *plot.Axis, frac float64) {
	span := a.Max - a.Min
	if span <= 0 {
		a.Min, a.Max = a.Min-0.5, a.Max+0.5
		return
	}
	a.Min -= frac * span
	a.Max += frac * span
}

// infiniteNote names a point that lies at ±Inf (ρ of a rank-deficient
// embedding, say), for the figure's caption line.
func infiniteNote(label string, x, y float64, opt PlotOptions) string {
	name := label
	if name == "" {
		name = "a point"
	}
	ax, v := opt.XLabel, x
	if !math.IsInf(x, 0) {
		ax, v = opt.YLabel, y
	}
	if ax == "" {
		return fmt.Sprintf("%s (%+v)", name, v)
	}
	return fmt.Sprintf("%s (%s = %+v)", name, strings.SplitN(ax, " ", 2)[0], v)
}

func appendOnce(list []string, s string) []string {
	for _, t := range list {
		if t == s {
			return list
		}
	}
	return append(list, s)
}

// thinIndex keeps about n evenly spaced entries of idx, starting at an
// offset that differs per series k.
func thinIndex(idx []int, n, k int) []int {
	step := (len(idx) + n - 1) / n
	var out []int
	for j := (k * step / 3) % step; j < len(idx); j += step {
		out = append(out, idx[j])
	}
	return out
}

// SavePlots writes one or more figures side by side to path, w × h in
// all (default 6 × 4 inches per figure); the format (PNG, PDF, SVG, EPS,
// JPEG, TIFF) follows the extension, raster formats at dpi (0:
// DefaultDPI). PDF embeds the subset of the font's glyphs the figure uses;
// SVG names generic fallbacks after the font. The file is written to a
// temporary name and renamed.
func SavePlots(path string, figs []*Figure, w, h vg.Length, dpi int) error {
	if len(figs) == 0 {
		return errors.New("reports: no plots to save")
	}
	format, err := plotFormat(path)
	if err != nil {
		return err
	}
	if w == 0 {
		w = 6 * vg.Inch * vg.Length(len(figs))
	}
	if h == 0 {
		h = 4 * vg.Inch
	}
	if dpi == 0 {
		dpi = DefaultDPI
	}
	c, err := newCanvas(format, w, h, dpi)
	if err != nil {
		return err
	}
	// A small margin on the right and at the top, so the frame never
	// touches the image edge.
	dc := draw.Crop(draw.New(c), 0, -vg.Points(4), 0, -vg.Points(4))
	if len(figs) == 1 {
		drawFigure(figs[0], dc)
	} else {
		row := make([][]*plot.Plot, 1)
		for _, f := range figs {
			row[0] = append(row[0], f.Plot)
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(figs), PadX: vg.Millimeter * 4}
		cs := plot.Align(row, tiles, dc)
		for i, f := range figs {
			drawFigure(f, cs[0][i])
		}
	}
	if err := atomicfile.WriteFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// drawFigure draws f into c with its legend in a free corner of the data
// area or, when every corner would cover data, in a column right of it.
func drawFigure(f *Figure, c draw.Canvas) {
	fitTitle(f.Plot, c.Max.X-c.Min.X)
	lp := f.legend
	if lp == nil || len(lp.names) == 0 {
		f.Plot.Draw(c)
		return
	}
	lp.outside = false
	trial := draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: c.Rectangle}
	f.Plot.Draw(trial)
	if lp.fits {
		f.Plot.Draw(c)
		return
	}
	lp.outside = true
	lw, _ := lp.size()
	gap := lp.inset
	width := c.Max.X - c.Min.X
	if width-(lw+gap) >= minFrameShare*width {
		pc := draw.Crop(c, 0, -(lw + gap), 0, 0)
		f.Plot.Draw(pc)
		strip := c
		strip.Min.X = pc.Max.X + gap
		lp.drawOutside(strip, f.Plot.DataCanvas(pc).Max.Y)
		return
	}
	// Right of the frame the legend would squeeze it: below it, in
	// columns, the text smaller if need be.
	cols, lh, ok := lp.below(width, 0.4*(c.Max.Y-c.Min.Y))
	if !ok {
		f.Notes = append(f.Notes, legendWarning(len(lp.names)))
	}
	pc := draw.Crop(c, 0, 0, lh+gap, 0)
	f.Plot.Draw(pc)
	strip := c
	strip.Max.Y = pc.Min.Y - gap/2
	lp.drawBelow(strip, cols)
}

// SaveSeries plots series with opt and writes the figure to path.
func SaveSeries(path string, series []Series, opt PlotOptions) error {
	f, err := NewPlot(series, opt)
	if err != nil {
		return err
	}
	return SavePlots(path, []*Figure{f}, opt.Width, opt.Height, opt.DPI)
}

// SaveCurves writes the training curves of runs as two panels side by
// side: mean training loss and mean test metric per epoch, ± std across
// runs (record.Run.History). opt.Title, if set, replaces the left panel's
// title (opt.NoTitle removes both); opt.Width is per panel. It returns the
// notes of points not drawn.
func SaveCurves(path string, runs []reports.LoadedRun, groupBy []string, metric string, raw bool, opt PlotOptions) ([]string, error) {
	loss, met, err := CurveSeries(runs, groupBy, metric, raw)
	if err != nil {
		return nil, err
	}
	if opt.Width == 0 {
		opt.Width = 6 * vg.Inch
	}
	panel := PlotOptions{XLabel: "epoch", NoTitle: opt.NoTitle, Width: opt.Width, Height: opt.Height,
		Style: opt.Style, Styles: opt.Styles}
	var figs []*Figure
	var notes []string
	if len(loss) > 0 {
		o := panel
		o.Title, o.YLabel = "training loss", "loss"
		f, err := NewPlot(loss, o)
		if err != nil {
			return nil, err
		}
		figs, notes = append(figs, f), append(notes, f.Notes...)
	}
	if len(met) > 0 {
		o := panel
		o.Title, o.YLabel = "test "+metric, metric
		if !raw && reports.IsPercentMetric(metric) {
			o.YLabel += " (%)"
		}
		f, err := NewPlot(met, o)
		if err != nil {
			return nil, err
		}
		figs, notes = append(figs, f), append(notes, f.Notes...)
	}
	if opt.Title != "" && !opt.NoTitle {
		figs[0].Plot.Title.Text = opt.Title
	}
	// One legend, on the last panel: both panels show the same methods.
	for _, f := range figs[:len(figs)-1] {
		f.legend.names = nil // the placer draws no legend without names
	}
	captionLine(figs[0].Plot, opt.Caption)
	if err := SavePlots(path, figs, opt.Width*vg.Length(len(figs)), opt.Height, opt.DPI); err != nil {
		return nil, err
	}
	for _, f := range figs {
		for _, n := range f.Notes {
			notes = appendOnce(notes, n)
		}
	}
	return notes, nil
}
