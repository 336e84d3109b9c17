package plots

import (
	"context"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/projection"
)

// TSNEMap is a 2-D t-SNE map of the sampled rows of x (projection.TSNE with
// opt), one scatter per class coloured evenly in hue; names, when longer
// than a label, give the legend's class names. An empty title becomes
// TSNETitle's. It returns the figure and the t-SNE result (KL(P‖Q)).
func TSNEMap(ctx context.Context, x knn.Matrix, ids []int32, names []string, s projection.Sample, opt projection.Options, title string) (*plot.Plot, *projection.Result, error) {
	sub := knn.Matrix{Rows: len(s.Rows), Cols: x.Cols, Data: make([]float32, len(s.Rows)*x.Cols)}
	for r, i := range s.Rows {
		copy(sub.Row(r), x.Row(i))
	}
	res, err := projection.TSNE(ctx, sub, opt)
	if err != nil {
		return nil, nil, err
	}
	if title == "" {
		title = TSNETitle(len(s.Rows), x.Rows, len(s.Classes), s.AllClasses, opt.Perplexity)
	}
	return tsnePlot(res.Y, s.Rows, ids, s.Classes, names, title), res, nil
}

// tsnePlot draws one scatter per class: colours evenly spaced in hue
// (plotutil's palette has only 7), shapes cycling, a legend when there are
// at most 20 classes (room made on the right).
func tsnePlot(Y []float64, rows []int, ids []int32, classes []int32, names []string, title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "t-SNE 1", "t-SNE 2"
	pos := map[int32]int{}
	for i, l := range classes {
		pos[l] = i
	}
	pts := make([]plotter.XYs, len(classes))
	for r, i := range rows {
		k := pos[ids[i]]
		pts[k] = append(pts[k], plotter.XY{X: Y[2*r], Y: Y[2*r+1]})
	}
	legend := len(classes) <= 20
	for k, xy := range pts {
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			continue // only non-finite points; never from t-SNE
		}
		sc.Color = hueColor(k, len(classes))
		sc.Shape = plotutil.Shape(k)
		sc.Radius = vg.Points(2)
		p.Add(sc)
		if legend {
			name := fmt.Sprint(classes[k])
			if int(classes[k]) < len(names) {
				name = names[classes[k]]
			}
			p.Legend.Add(name, sc)
		}
	}
	if legend {
		if span := p.X.Max - p.X.Min; span > 0 {
			p.X.Max += 0.3 * span
		}
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = vg.Points(8)
	}
	return p
}

// hueColor is the k-th of n colours evenly spaced in hue (HSV, s = 0.75,
// v = 0.85); even k take the first half of the wheel and odd k the second
// (a permutation of the n hues), so consecutive classes differ strongly.
func hueColor(k, n int) color.Color {
	n = max(n, 1)
	j := k / 2
	if k%2 == 1 {
		j += (n + 1) / 2
	}
	h := float64(j%n) / float64(n)
	s, v := 0.75, 0.85
	i := int(h * 6)
	f := h*6 - float64(i)
	pp, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	var r, g, b float64
	switch i % 6 {
	case 0:
		r, g, b = v, t, pp
	case 1:
		r, g, b = q, v, pp
	case 2:
		r, g, b = pp, v, t
	case 3:
		r, g, b = pp, q, v
	case 4:
		r, g, b = t, pp, v
	default:
		r, g, b = v, pp, q
	}
	return color.RGBA{R: uint8(255 * r), G: uint8(255 * g), B: uint8(255 * b), A: 255}
}

// TSNETitle says what the map shows, and that it is a random subsample
// when it does not show every point or every class.
func TSNETitle(points, total, classes, allClasses int, perplexity float64) string {
	if points == total {
		return fmt.Sprintf("t-SNE: all %d points, %d classes (perplexity %g)", total, classes, perplexity)
	}
	return fmt.Sprintf("t-SNE of a random subsample: %d of %d points, %d of %d classes (perplexity %g)",
		points, total, classes, allClasses, perplexity)
}
