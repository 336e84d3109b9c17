package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendPlacer is the last layer of a figure: it draws the legend in the
// first corner of the data area (top right, top left, bottom right,
// bottom left) where it covers no drawn point, line, error bar or band.
// When no corner is free, fits is false and SavePlots draws the legend
// outside, right of the frame.
type legendPlacer struct {
	legend plot.Legend
	names  []string // the legend's entries (plot.Legend keeps them private)
	thumbs [][]plot.Thumbnailer
	// obstacles are the drawn polylines in data coordinates (a single
	// point is a marker).
	obstacles []plotter.XYs
	inset     vg.Length
	margin    vg.Length // around markers
	// outside: draw nothing (SavePlots draws the legend next to the plot).
	outside bool
	fits    bool
}

// add adds an entry to the legend.
func (lp *legendPlacer) add(name string, thumbs ...plot.Thumbnailer) {
	lp.legend.Add(name, thumbs...)
	lp.names = append(lp.names, name)
	lp.thumbs = append(lp.thumbs, thumbs)
}

// size is the legend's width and height.
func (lp *legendPlacer) size() (w, h vg.Length) {
	l := &lp.legend
	n := 0
	for _, e := range lp.names {
		w = max(w, l.ThumbnailWidth+l.TextStyle.Width(" "+e))
		n++
	}
	eh := l.TextStyle.Height("Mg")
	if n > 0 {
		h = vg.Length(n)*eh + vg.Length(n-1)*l.Padding
	}
	return w, h
}

// Plot implements plot.Plotter: it chooses the corner and draws the
// legend there.
func (lp *legendPlacer) Plot(c draw.Canvas, p *plot.Plot) {
	lp.fits = false
	if lp.outside || len(lp.names) == 0 {
		return
	}
	trX, trY := p.Transforms(&c)
	w, h := lp.size()
	corners := []struct{ top, left bool }{{true, false}, {true, true}, {false, false}, {false, true}}
	for _, k := range corners {
		r := vg.Rectangle{Min: vg.Point{X: c.Max.X - lp.inset - w, Y: c.Max.Y - lp.inset - h}}
		if k.left {
			r.Min.X = c.Min.X + lp.inset
		}
		if !k.top {
			r.Min.Y = c.Min.Y + lp.inset
		}
		r.Max = vg.Point{X: r.Min.X + w, Y: r.Min.Y + h}
		if lp.covers(r, trX, trY) {
			continue
		}
		lp.fits = true
		// Samples on the left of their names in every corner, as in
		// matplotlib: a left-aligned legend shifted to the corner.
		l := lp.legend
		l.Top, l.Left = k.top, true
		l.XOffs = r.Min.X - c.Min.X
		l.YOffs = -lp.inset
		if !k.top {
			l.YOffs = lp.inset
		}
		l.Draw(c)
		return
	}
}

// covers reports whether rectangle r (grown by the marker margin) meets
// any obstacle.
func (lp *legendPlacer) covers(r vg.Rectangle, trX, trY func(float64) vg.Length) bool {
	m := lp.margin
	r = vg.Rectangle{Min: vg.Point{X: r.Min.X - m, Y: r.Min.Y - m}, Max: vg.Point{X: r.Max.X + m, Y: r.Max.Y + m}}
	for _, line := range lp.obstacles {
		for i := range line {
			a := vg.Point{X: trX(line[i].X), Y: trY(line[i].Y)}
			if inRect(a, r) {
				return true
			}
			if i > 0 {
				b := vg.Point{X: trX(line[i-1].X), Y: trY(line[i-1].Y)}
				if segmentMeets(a, b, r) {
					return true
				}
			}
		}
	}
	return false
}

func inRect(p vg.Point, r vg.Rectangle) bool {
	return p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y
}

// segmentMeets reports whether segment ab meets rectangle r (sampled
// finely enough for a legend: 64 points along it).
func segmentMeets(a, b vg.Point, r vg.Rectangle) bool {
	for t := 0; t <= 64; t++ {
		f := vg.Length(t) / 64
		if inRect(vg.Point{X: a.X + f*(b.X-a.X), Y: a.Y + f*(b.Y-a.Y)}, r) {
			return true
		}
	}
	return false
}

// drawOutside draws the legend at the top left of c (the strip right of
// the plot), its top at the data area's top.
func (lp *legendPlacer) drawOutside(c draw.Canvas, top vg.Length) {
	l := lp.legend
	l.Top, l.Left = true, true
	l.XOffs, l.YOffs = 0, top-c.Max.Y
	l.Draw(c)
}

// below is the legend in columns under the frame: how many columns fit
// width w, the text shrunk (to minTextSize) until the rows take at most
// maxH; ok is false when even the smallest text does not fit.
func (lp *legendPlacer) below(w, maxH vg.Length) (cols int, h vg.Length, ok bool) {
	gap := lp.inset * 2
	for {
		l := &lp.legend
		var ew vg.Length
		for _, e := range lp.names {
			ew = max(ew, l.ThumbnailWidth+l.TextStyle.Width(" "+e))
		}
		cols = legendColumns(len(lp.names), ew, gap, w)
		rows := (len(lp.names) + cols - 1) / cols
		h = vg.Length(rows)*l.TextStyle.Height("Mg") + vg.Length(rows-1)*l.Padding
		fitsW := ew <= w
		if (h <= maxH && fitsW) || l.TextStyle.Font.Size <= minTextSize {
			return cols, h, h <= maxH && fitsW
		}
		l.TextStyle.Font.Size = max(minTextSize, l.TextStyle.Font.Size*0.9)
		l.ThumbnailWidth *= 0.9
	}
}

// drawBelow draws the legend in cols columns, filled row by row, at the
// top of c.
func (lp *legendPlacer) drawBelow(c draw.Canvas, cols int) {
	colW := (c.Max.X - c.Min.X) / vg.Length(cols)
	for k := range cols {
		l := lp.legend
		l = plot.Legend{TextStyle: l.TextStyle, Padding: l.Padding, ThumbnailWidth: l.ThumbnailWidth, Top: true, Left: true,
			XOffs: vg.Length(k) * colW}
		for i := k; i < len(lp.names); i += cols {
			l.Add(lp.names[i], lp.thumbs[i]...)
		}
		l.Draw(c)
	}
}
