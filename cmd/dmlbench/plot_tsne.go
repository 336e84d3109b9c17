package main

import (
	"fmt"
	"image/color"
	"math/rand"
	"sort"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/projection"
	"github.com/dmlbench/dmlbench/reports"
)

// plotTSNECommand is `dmlbench plot tsne` (seed 001 §5–6: 2-D views of
// test embeddings, coloured by class).
var plotTSNECommand = &cli.Command{
	Name:      "tsne",
	Usage:     "2-D t-SNE map of embeddings, coloured by class",
	UsageText: "dmlbench plot tsne --emb E.npy --labels L.npy --out FIG [--classes 10] [--max-points 2000]",
	Description: `Exact t-SNE (van der Maaten & Hinton 2008; package projection): Gaussian input
affinities calibrated to --perplexity by bisection, Student-t map affinities, early
exaggeration 12 for 250 steps, momentum 0.5 → 0.8, learning rate 200, --iters steps.
O(N²) time and memory per step, so a seeded sample is mapped: --classes classes drawn
at random (0: all), then at most --max-points of their items drawn at random (0: all).
The same --seed gives the same sample and the same map. A progress bar shows on long runs.

Examples:
   dmlbench plot tsne --emb test_emb.npy --labels test_labels.npy --out tsne.png
   dmlbench plot tsne --emb E.npz:embeddings --labels E.npz:labels --classes 20 --max-points 3000 --out tsne.pdf
   dmlbench plot tsne --emb E.npy --labels names.txt --perplexity 50 --seed 1 --title "margin, epoch 20" --out tsne.svg`,
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "emb", Usage: "embeddings: `FILE`.npy or FILE.npz:key (N×D)"},
		&cli.StringFlag{Name: "labels", Usage: "labels: `FILE`.npy / .npz:key (integers) or a text file, one label per line"},
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "image `FILE` (.png, .svg or .pdf), or a directory to write tsne.png into; required"},
		&cli.IntFlag{Name: "classes", Value: 10, Usage: "number of classes drawn at random (0: all)"},
		&cli.IntFlag{Name: "max-points", Value: 2000, Usage: "at most this many items of the drawn classes, drawn at random (0: all)"},
		&cli.Float64Flag{Name: "perplexity", Value: 30, Usage: "t-SNE perplexity (effective number of neighbours)"},
		&cli.IntFlag{Name: "iters", Value: 1000, Usage: "gradient steps"},
		&cli.Int64Flag{Name: "seed", Usage: "seed of the class/point sample and of the initial map"},
		&cli.IntFlag{Name: "threads", DefaultText: "all cores", Usage: "worker threads"},
		&cli.StringFlag{Name: "title", Usage: "figure title (default: t-SNE, with the sample size)"},
		&cli.Float64Flag{Name: "width", Value: 6, Usage: "figure width in inches"},
		&cli.Float64Flag{Name: "height", Value: 5, Usage: "figure height in inches"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar"},
	},
	Action: plotTSNEAction,
}

func plotTSNEAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("plot tsne takes no positional arguments (got %q); use --emb and --labels", c.Args().First())
	}
	switch {
	case c.String("emb") == "" || c.String("labels") == "":
		return usagef("--emb and --labels are required (see dmlbench plot tsne --help)")
	case c.String("out") == "":
		return usagef("--out FILE (.png, .svg or .pdf) is required")
	case c.Int("classes") < 0 || c.Int("max-points") < 0:
		return usagef("--classes and --max-points must be ≥ 0")
	case c.Int("iters") < 1:
		return usagef("--iters must be ≥ 1")
	case !(c.Float64("perplexity") > 0):
		return usagef("--perplexity must be > 0")
	}
	w, h := c.Float64("width"), c.Float64("height")
	if !(w > 0 && w <= 100 && h > 0 && h <= 100) {
		return usagef("--width and --height must lie in (0, 100] inches")
	}
	x, err := fixtures.LoadEmbeddings(c.String("emb"))
	if err != nil {
		return err
	}
	ids, names, err := fixtures.LoadLabels(c.String("labels"))
	if err != nil {
		return err
	}
	if err := fixtures.CheckPair(x, ids, c.String("emb"), c.String("labels")); err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(c.Int64("seed")))
	rows, classes := tsneSample(ids, c.Int("classes"), c.Int("max-points"), rng)
	if perp := c.Float64("perplexity"); perp >= float64(len(rows)-1) {
		return usagef("--perplexity %g needs more than %g points; the sample has %d (raise --classes / --max-points or lower --perplexity)", perp, perp+1, len(rows))
	}
	sub := knn.Matrix{Rows: len(rows), Cols: x.Cols, Data: make([]float32, len(rows)*x.Cols)}
	for r, i := range rows {
		copy(sub.Row(r), x.Row(i))
	}
	prog := stageProgress(c.Bool("quiet"))
	opt := projection.Options{Perplexity: c.Float64("perplexity"), Iters: c.Int("iters"), Seed: c.Int64("seed"), Threads: c.Int("threads")}
	if prog != nil {
		opt.Progress = func(done, total int) { prog("t-SNE", done, total) }
	}
	res, err := projection.TSNE(c.Context, sub, opt)
	if err != nil {
		return err
	}
	title := c.String("title")
	if title == "" {
		title = tsneTitle(len(rows), x.Rows, len(classes), distinctIDs(ids), opt.Perplexity)
	}
	p := tsnePlot(res.Y, rows, ids, classes, names, title)
	if err := reports.SavePlots(plotPath(c), []*plot.Plot{p}, vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "t-SNE: %d points, %d classes, KL(P‖Q) = %.4f\n", len(rows), len(classes), res.KL)
	}
	return plotDone(c, plotPath(c))
}

// tsneSample draws k classes (all when k is 0 or exceeds their number)
// from the sorted distinct ids, then at most maxPts of their rows (all when
// 0); both lists come back sorted, so the map's input order is the file's.
func tsneSample(ids []int32, k, maxPts int, rng *rand.Rand) (rows []int, classes []int32) {
	seen := map[int32]bool{}
	for _, l := range ids {
		if !seen[l] {
			seen[l] = true
			classes = append(classes, l)
		}
	}
	sort.Slice(classes, func(a, b int) bool { return classes[a] < classes[b] })
	if k > 0 && k < len(classes) {
		perm := rng.Perm(len(classes))[:k]
		sort.Ints(perm)
		picked := make([]int32, k)
		for i, p := range perm {
			picked[i] = classes[p]
		}
		classes = picked
	}
	keep := map[int32]bool{}
	for _, l := range classes {
		keep[l] = true
	}
	for i, l := range ids {
		if keep[l] {
			rows = append(rows, i)
		}
	}
	if maxPts > 0 && maxPts < len(rows) {
		perm := rng.Perm(len(rows))[:maxPts]
		sort.Ints(perm)
		picked := make([]int, maxPts)
		for i, p := range perm {
			picked[i] = rows[p]
		}
		rows = picked
	}
	return rows, classes
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

// tsneTitle says what the map shows, and that it is a random subsample
// when it does not show every point or every class.
func tsneTitle(points, total, classes, allClasses int, perplexity float64) string {
	if points == total {
		return fmt.Sprintf("t-SNE: all %d points, %d classes (perplexity %g)", total, classes, perplexity)
	}
	return fmt.Sprintf("t-SNE of a random subsample: %d of %d points, %d of %d classes (perplexity %g)",
		points, total, classes, allClasses, perplexity)
}

func distinctIDs(ids []int32) int {
	seen := map[int32]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}
