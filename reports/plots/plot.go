package plots

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/reports"
)

// PNGDPI is the resolution of PNG figures.
const PNGDPI = 150

// Series is one labelled curve with optional symmetric error bars
// (standard deviation over seeds) in either direction.
type Series struct {
	Label string
	X, Y  []float64
	// YErr and XErr are half-widths (nil: no bars).
	YErr, XErr []float64
	// N is the number of runs behind each point (nil if not aggregated).
	N []int
}

// PlotOptions describe one figure.
type PlotOptions struct {
	Title, XLabel, YLabel string
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
	// of a legend (ρ scatter).
	PointLabels bool
	// Caption is a line of facts under the x axis label (sizes, values
	// of the figure); the title stays a title.
	Caption string
	// Width and Height of the figure (default 6 × 4 inches).
	Width, Height vg.Length
}

// formats that Save understands, by file extension.
var plotFormats = map[string]bool{"png": true, "svg": true, "pdf": true, "eps": true, "jpg": true, "jpeg": true, "tif": true, "tiff": true}

func plotFormat(path string) (string, error) {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if !plotFormats[ext] {
		return "", fmt.Errorf("reports: cannot tell the image format of %q: use .png, .svg or .pdf", path)
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

// NewPlot builds a gonum plot of series: each series' drawable points
// become layers (error bars, line, markers, point labels), then the axes
// get their scales and ticks, and the ranges grow to leave room for point
// labels and the legend.
func NewPlot(series []Series, opt PlotOptions) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("reports: nothing to plot")
	}
	if !opt.Points && !opt.Lines {
		opt.Points, opt.Lines = true, true
	}
	p := plot.New()
	p.Title.Text = opt.Title
	p.X.Label.Text = opt.XLabel
	p.Y.Label.Text = opt.YLabel
	p.Add(plotter.NewGrid())
	st := plotStats{allIntX: true}
	for i, s := range series {
		d, err := st.drawable(s, opt)
		if err != nil {
			return nil, err
		}
		if len(d.idx) == 0 {
			continue
		}
		st.npts += len(d.idx)
		thumbs, err := addSeriesLayers(p, d, i, opt)
		if err != nil {
			return nil, err
		}
		if s.Label != "" && !opt.PointLabels {
			p.Legend.Add(s.Label, thumbs...)
			st.legendN++
		}
	}
	if st.npts == 0 {
		return nil, errors.New("reports: no finite (and, on log axes, positive) points to plot")
	}
	setAxes(p, opt, st)
	makeRoom(p, opt, st.legendN)
	placeLegend(p)
	return p, nil
}

// legendInset is the distance of the legend from the frame's top right
// corner, so its samples stay inside the frame.
const legendInset = 6

// placeLegend puts the legend in the top right corner inside the frame,
// entries in 9 pt (matplotlib's "upper right" legend).
func placeLegend(p *plot.Plot) {
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.XOffs = -vg.Points(legendInset)
	p.Legend.YOffs = -vg.Points(legendInset)
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
	xticks        []float64 // x of every drawn point
	infinite      []string  // notes on points at ±Inf, which cannot be drawn
	npts, legendN int
	allIntX       bool // every drawn x is an integer
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

// addSeriesLayers adds the i-th series' layers to p: error bars, a line in
// its dash pattern and markers in its shape, all in its colour, and point
// labels. It returns the line and markers for the legend.
func addSeriesLayers(p *plot.Plot, d xyErr, i int, opt PlotOptions) ([]plot.Thumbnailer, error) {
	col := plotutil.Color(i)
	if err := addErrorBars(p, d, col); err != nil {
		return nil, err
	}
	var thumbs []plot.Thumbnailer
	if opt.Lines && len(d.idx) > 1 {
		line, err := plotter.NewLine(d)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		// Each series its own dash pattern as well as its own colour, so
		// curves that coincide stay distinguishable (and in grey print).
		line.Dashes = plotutil.Dashes(i)
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
			return nil, fmt.Errorf("reports: %w", err)
		}
		sc.Color = col
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3)
		p.Add(sc)
		thumbs = append(thumbs, sc)
	}
	if opt.PointLabels {
		lb, err := plotter.NewLabels(d)
		if err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		for k := range lb.TextStyle {
			lb.TextStyle[k].Font.Size = vg.Points(7)
			lb.TextStyle[k].Color = col
		}
		lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(3)}
		p.Add(lb)
	}
	return thumbs, nil
}

// addErrorBars adds d's y and x error bars (those it has) in the series'
// colour, so each bar reads as its series'.
func addErrorBars(p *plot.Plot, d xyErr, col color.Color) error {
	if d.s.YErr != nil {
		eb, err := plotter.NewYErrorBars(d)
		if err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		eb.Color = col
		p.Add(eb)
	}
	if d.s.XErr != nil {
		eb, err := plotter.NewXErrorBars(d)
		if err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		eb.Color = col
		p.Add(eb)
	}
	return nil
}

// setAxes gives p its log scales and tick markers (round values on linear
// axes, whole numbers only when every x is one), and names the points
// that could not be drawn in the caption line.
func setAxes(p *plot.Plot, opt PlotOptions, st plotStats) {
	if opt.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
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
	caption := opt.Caption
	if len(st.infinite) > 0 {
		caption = strings.TrimPrefix(caption+"; not drawn: "+strings.Join(st.infinite, "; "), "; ")
	}
	captionLine(p, caption)
}

// makeRoom widens p's ranges: a 5% margin on each side of every axis
// (matplotlib's default; of the logarithm on log axes), so no marker is
// cut at the frame; right of the rightmost points for point labels; and
// above the data for a legend of legendN entries.
func makeRoom(p *plot.Plot, opt PlotOptions, legendN int) {
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
	if legendN > 0 {
		// Head-room above the data for the legend (about 5% of the height
		// per entry), so it never hides curves.
		frac := 0.05*float64(legendN) + 0.03
		if opt.LogY && p.Y.Min > 0 && p.Y.Max > p.Y.Min {
			lspan := math.Log10(p.Y.Max) - math.Log10(p.Y.Min)
			p.Y.Max *= math.Pow(10, lspan*frac/(1-frac))
		} else if span := p.Y.Max - p.Y.Min; span > 0 {
			p.Y.Max += span * frac / (1 - frac)
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

// roundTicks puts major ticks at the multiples of a round step (1, 2,
// 2.5 or 5 times a power of ten; integer steps only when integer is set)
// that give 4 to 7 ticks across the range, labelled with as few decimals
// as the step needs (25, 50, 75, not 25.00), and a minor tick halfway.
type roundTicks struct{ integer bool }

func (t roundTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return (plot.DefaultTicks{}).Ticks(min, max)
	}
	step := roundStep(max-min, t.integer)
	dec := 0 // the fewest decimals that write the step exactly: 2.5 → 1
	for ; dec < 10; dec++ {
		if r := step * math.Pow(10, float64(dec)); math.Abs(r-math.Round(r)) < 1e-6*r {
			break
		}
	}
	var out []plot.Tick
	for k := math.Ceil(min / step * 2); k/2*step <= max+step*1e-9; k++ {
		v := k / 2 * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		if int64(k)%2 != 0 {
			if !t.integer || v == math.Trunc(v) {
				out = append(out, plot.Tick{Value: v})
			}
			continue
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
	}
	return out
}

// roundStep is the smallest round step (1, 2, 2.5, 5 × 10^k; with integer
// at least 1) that divides span into at most 6 intervals.
func roundStep(span float64, integer bool) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(span/6)))
	for {
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * mag
			if integer && (step < 1 || step != math.Trunc(step)) {
				continue
			}
			if span/step <= 6 {
				return step
			}
		}
		mag *= 10
	}
}

// valueTicks puts major ticks exactly at the distinct x values (at most
// 12, thinned evenly) — sweeps over 32, 64, 128 … read better that way.
func valueTicks(xs []float64) plot.Ticker {
	set := map[float64]bool{}
	var u []float64
	for _, x := range xs {
		if !set[x] {
			set[x] = true
			u = append(u, x)
		}
	}
	sort.Float64s(u)
	for len(u) > 12 {
		var t []float64
		for i := 0; i < len(u); i += 2 {
			t = append(t, u[i])
		}
		u = t
	}
	ticks := make(plot.ConstantTicks, len(u))
	for i, x := range u {
		ticks[i] = plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', 6, 64)}
	}
	return ticks
}

// SavePlots writes one or more plots side by side to path; the format
// (PNG, SVG, PDF, EPS, JPEG, TIFF) follows the extension. The file is
// written to a temporary name and renamed.
func SavePlots(path string, plots []*plot.Plot, w, h vg.Length) error {
	if len(plots) == 0 {
		return errors.New("reports: no plots to save")
	}
	format, err := plotFormat(path)
	if err != nil {
		return err
	}
	if w == 0 {
		w = 6 * vg.Inch * vg.Length(len(plots))
	}
	if h == 0 {
		h = 4 * vg.Inch
	}
	var c vg.CanvasWriterTo
	if format == "png" {
		// 150 dpi instead of vgimg's 72 keeps text legible in READMEs.
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI))}
	} else if c, err = draw.NewFormattedCanvas(w, h, format); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	// A margin on the right and at the top, so the frame (and the
	// legend inside it) never touches the image edge.
	dc := draw.Crop(draw.New(c), 0, -vg.Points(10), 0, -vg.Points(6))
	if len(plots) == 1 {
		plots[0].Draw(dc)
	} else {
		row := [][]*plot.Plot{plots}
		tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 2,
			PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		cs := plot.Align(row, tiles, dc)
		for i, p := range plots {
			p.Draw(cs[0][i])
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

// SaveSeries plots series with opt and writes the figure to path.
func SaveSeries(path string, series []Series, opt PlotOptions) error {
	p, err := NewPlot(series, opt)
	if err != nil {
		return err
	}
	return SavePlots(path, []*plot.Plot{p}, opt.Width, opt.Height)
}

// SaveCurves writes the training curves of runs as two panels side by
// side: mean training loss and mean test metric per epoch, ± std across
// runs (record.Run.History). opt.Title, if set, replaces the left panel's
// title; opt.Width is per panel.
func SaveCurves(path string, runs []reports.LoadedRun, groupBy []string, metric string, raw bool, opt PlotOptions) error {
	loss, met, err := CurveSeries(runs, groupBy, metric, raw)
	if err != nil {
		return err
	}
	var plots []*plot.Plot
	if len(loss) > 0 {
		p, err := NewPlot(loss, PlotOptions{Title: "training loss", XLabel: "epoch", YLabel: "loss"})
		if err != nil {
			return err
		}
		plots = append(plots, p)
	}
	if len(met) > 0 {
		unit := ""
		if !raw && reports.IsPercentMetric(metric) {
			unit = " (%)"
		}
		p, err := NewPlot(met, PlotOptions{Title: "test " + metric, XLabel: "epoch", YLabel: metric + unit})
		if err != nil {
			return err
		}
		plots = append(plots, p)
	}
	if opt.Title != "" {
		plots[0].Title.Text = opt.Title
	}
	captionLine(plots[0], opt.Caption)
	w := opt.Width
	if w == 0 {
		w = 6 * vg.Inch
	}
	return SavePlots(path, plots, w*vg.Length(len(plots)), opt.Height)
}
