package plots

import (
	"context"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/reports/projection"
)

// TSNEMap is a 2-D t-SNE map of the sampled rows of x (projection.TSNE with
// opt), one scatter per class in its own colour and marker (classStyle);
// names, when longer than a label, give the legend's class names. fig
// gives the title (empty: "t-SNE"), caption, size and style. It returns
// the figure and the t-SNE result (KL(P‖Q)); TSNECaption states the
// sample for a caption or a message.
func TSNEMap(ctx context.Context, x mat32.Matrix, ids []int32, names []string, s projection.Sample, opt projection.Options, fig PlotOptions) (*Figure, *projection.Result, error) {
	sub := mat32.Matrix{Rows: len(s.Rows), Cols: x.Cols, Data: make([]float32, len(s.Rows)*x.Cols)}
	for r, i := range s.Rows {
		copy(sub.Row(r), x.Row(i))
	}
	res, err := projection.TSNE(ctx, sub, opt)
	if err != nil {
		return nil, nil, err
	}
	if fig.Title == "" {
		fig.Title = "t-SNE"
	}
	f := tsnePlot(res.Y, s.Rows, ids, s.Classes, names, fig)
	return f, res, nil
}

// maxLegendClasses is the most classes a t-SNE legend lists.
const maxLegendClasses = 20

// tsnePlot draws one scatter per class in classStyle's colour and marker,
// with a 5% margin around the points and, for at most maxLegendClasses
// classes, a legend (legendPlacer: a free corner, else a column on the
// right).
func tsnePlot(Y []float64, rows []int, ids []int32, classes []int32, names []string, fig PlotOptions) *Figure {
	sty := fig.style()
	p := plot.New()
	sty.apply(p)
	if !fig.NoTitle {
		p.Title.Text = fig.Title
	}
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
	lp := &legendPlacer{legend: p.Legend, inset: sty.Font / 2, margin: sty.markerRadius()}
	p.Legend = plot.NewLegend()
	legend := len(classes) <= maxLegendClasses
	for k, xy := range pts {
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			continue // only non-finite points; never from t-SNE
		}
		sc.Color, sc.Shape = classStyle(k)
		sc.Radius = sty.markerRadius() * 0.8
		p.Add(sc)
		for _, q := range xy {
			lp.obstacles = append(lp.obstacles, plotter.XYs{q})
		}
		if legend {
			name := fmt.Sprint(classes[k])
			if int(classes[k]) < len(names) {
				name = names[classes[k]]
			}
			lp.add(name, sc)
		}
	}
	addMargins(&p.X, 0.05)
	addMargins(&p.Y, 0.05)
	p.X.Tick.Marker, p.Y.Tick.Marker = roundTicks{}, roundTicks{}
	captionLine(p, fig.Caption)
	p.Add(lp)
	return &Figure{Plot: p, legend: lp}
}

// tab10 is matplotlib's default qualitative palette ("tab10", the
// Tableau 10 colours).
var tab10 = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// classStyle is the colour and marker of class k: the k-th colour of
// tab10, the marker changing every 10 classes, so the first
// 10 × len(plotutil.DefaultGlyphShapes) = 70 classes all differ in the pair.
func classStyle(k int) (color.Color, draw.GlyphDrawer) {
	return tab10[k%len(tab10)], plotutil.Shape(k / len(tab10))
}

// TSNECaption states what a map shows: the points and classes drawn
// (of how many: a random subsample when not all), the perplexity, and
// KL(P‖Q) to 3 significant digits.
func TSNECaption(points, total, classes, allClasses int, perplexity, kl float64) string {
	if points == total {
		return fmt.Sprintf("all %d points, %d classes; perplexity %g, KL %.3g", total, classes, perplexity, kl)
	}
	return fmt.Sprintf("random subsample: %d of %d points, %d of %d classes; perplexity %g, KL %.3g",
		points, total, classes, allClasses, perplexity, kl)
}

// TSNEInputs are plot tsne's embedding and label files and the sample
// and optimisation the map takes.
type TSNEInputs struct {
	Emb, Labels        string
	Classes, MaxPoints int
	Iters              int
	Perplexity         float64
	Seed               int64
}

// Check refuses missing files and out-of-range settings (usage errors).
func (t TSNEInputs) Check() error {
	switch {
	case t.Emb == "" || t.Labels == "":
		return usage.Errorf("--emb and --labels are required (see dmlbench plot tsne --help)")
	case t.Classes < 0 || t.MaxPoints < 0:
		return usage.Errorf("--classes and --max-points must be ≥ 0")
	case t.Iters < 1:
		return usage.Errorf("--iters must be ≥ 1")
	case !(t.Perplexity > 0):
		return usage.Errorf("--perplexity must be > 0")
	}
	return nil
}

// Load reads the files and draws the sample of rows the map shows; a
// perplexity the sample is too small for is a usage error.
func (t TSNEInputs) Load() (x mat32.Matrix, ids []int32, names []string, smp projection.Sample, err error) {
	if x, err = arrays.LoadEmbeddings(t.Emb); err != nil {
		return
	}
	if ids, names, err = arrays.LoadLabels(t.Labels); err != nil {
		return
	}
	if err = arrays.CheckPair(x, ids, t.Emb, t.Labels); err != nil {
		return
	}
	smp = projection.SampleRows(ids, t.Classes, t.MaxPoints, t.Seed)
	if perp := t.Perplexity; perp >= float64(len(smp.Rows)-1) {
		err = usage.Errorf("--perplexity %g needs more than %g points; the sample has %d (raise --classes / --max-points or lower --perplexity)", perp, perp+1, len(smp.Rows))
	}
	return
}
