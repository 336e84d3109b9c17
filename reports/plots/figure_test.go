package plots

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// Log axes label every decade as 10^{k} with a true minus; an axis that
// holds fewer than two decades labels 2 × and 5 × 10^k too; minor ticks
// at 2…9 × 10^k carry no label otherwise.
func TestLogTicks(t *testing.T) {
	labels := func(min, max float64) string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(min, max) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		{0.004, 0.3, "10^{−2} 10^{−1}"},
		{1e-4, 1, "10^{−4} 10^{−3} 10^{−2} 10^{−1} 10^{0}"},
		// Less than one decade (a per-class spectrum): 2 and 5 × 10^k too.
		{0.012, 0.09, "2×10^{−2} 5×10^{−2}"},
		{0.03, 0.3, "5×10^{−2} 10^{−1} 2×10^{−1}"},
		{1, 1e12, "10^{0} 10^{2} 10^{4} 10^{6} 10^{8} 10^{10} 10^{12}"},
	} {
		if got := labels(c.min, c.max); got != c.want {
			t.Errorf("[%g, %g]: %q, want %q", c.min, c.max, got, c.want)
		}
	}
	n := 0
	for _, tk := range (logTicks{}).Ticks(0.004, 0.3) {
		if tk.Label == "" {
			n++
		}
	}
	if n != 6+8+2 { // 4…9e-3, 2…9e-2, 2…3e-1 (1e-2 and 1e-1 labelled)
		t.Errorf("%d minor ticks on [0.004, 0.3], want 16", n)
	}
	if (logTicks{}).Ticks(0, 1) != nil || (logTicks{}).Ticks(2, 1) != nil {
		t.Error("ticks on a non-positive or empty range")
	}
}

// Negative tick labels use the minus sign U+2212, not a hyphen.
func TestMinusSign(t *testing.T) {
	var got []string
	for _, tk := range (roundTicks{}).Ticks(-1, 1) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if strings.Join(got, " ") != "−1.0 −0.5 0.0 0.5 1.0" {
		t.Errorf("labels %q", got)
	}
	if minus("-3") != "−3" || minus("3") != "3" {
		t.Error("minus")
	}
}

// _{…} and ^{…} are sub- and superscripts; everything else, underscores
// in names included, is text.
func TestSplitScripts(t *testing.T) {
	for in, want := range map[string][]run{
		"s_{i} / Σ_{j} s_{j}": {{"s", 0}, {"i", -1}, {" / Σ", 0}, {"j", -1}, {" s", 0}, {"j", -1}},
		"10^{−2}":             {{"10", 0}, {"−2", 1}},
		"embed_dim":           {{"embed_dim", 0}},
		"a_{b":                {{"a_{b", 0}},
		"x^2_{i}":             {{"x^2", 0}, {"i", -1}},
		"":                    nil,
	} {
		if got := splitScripts(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
	// A subscript is narrower than the same text on the line.
	f := sans
	f.Size = vg.Points(10)
	if w1, w2 := textHandler.width("s_{ii}", f), textHandler.width("sii", f); !(w1 < w2) {
		t.Errorf("width with subscript %v, plain %v", w1, w2)
	}
}

// The default style follows the panel: 10 pt at 6 × 4 inches, smaller on
// smaller figures down to 7 pt; paper is 8 pt.
func TestStyleFor(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h float64
		want float64
	}{
		{"", 6, 4, 10}, {"default", 3, 2, 7}, {"default", 4.8, 3.2, 8}, {"default", 12, 8, 12}, {"paper", 3.3, 2.4, 8},
	} {
		s, err := StyleFor(c.name, vg.Length(c.w)*vg.Inch, vg.Length(c.h)*vg.Inch)
		if err != nil || math.Abs(s.Font.Points()-c.want) > 1e-9 {
			t.Errorf("%s %g×%g: %v pt (%v), want %g", c.name, c.w, c.h, s.Font.Points(), err, c.want)
		}
	}
	if _, err := StyleFor("poster", 0, 0); err == nil {
		t.Error("unknown style accepted")
	}
}

// A method keeps its style index in every figure of a directory, whichever
// methods the figure shows (curves leave out the eval-only pixel row).
func TestMethodStylesStable(t *testing.T) {
	m := MethodStyles([]string{"triplet", "margin", "pixels", "contrastive", "margin"})
	if !reflect.DeepEqual(m, map[string]int{"contrastive": 0, "margin": 1, "pixels": 2, "triplet": 3}) {
		t.Fatalf("%v", m)
	}
	all := seriesStyles([]Series{{Label: "contrastive"}, {Label: "pixels"}, {Label: "triplet"}}, m)
	some := seriesStyles([]Series{{Label: "triplet"}, {Label: "contrastive"}}, m)
	if all[2] != 3 || some[0] != 3 || some[1] != 0 || all[1] != 2 {
		t.Fatalf("styles %v and %v", all, some)
	}
	// Key, not the label with its sample size, picks the style; unknown
	// names take the indices after the directory's.
	s := seriesStyles([]Series{{Label: "triplet (n=3)", Key: "triplet"}, {Label: "file"}, {Label: "other"}, {Label: "file"}}, m)
	if !reflect.DeepEqual(s, []int{3, 4, 5, 4}) {
		t.Fatalf("%v", s)
	}
}

// drawn draws f on a w × h recorder canvas and returns the legend placer's
// verdict.
func drawn(f *Figure, w, h vg.Length) *legendPlacer {
	drawFigure(f, draw.Canvas{Canvas: &recorder.Canvas{}, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}})
	return f.legend
}

// The legend goes into a corner where it covers nothing drawn; when every
// corner has data, it goes outside the frame.
func TestLegendPlacement(t *testing.T) {
	// Rising line: top left and bottom right are free, top right is not.
	up := []Series{{Label: "a", X: []float64{0, 1, 2, 3}, Y: []float64{0, 1, 2, 3}}}
	f, err := NewPlot(up, PlotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lp := drawn(f, 6*vg.Inch, 4*vg.Inch); !lp.fits || lp.outside {
		t.Fatalf("rising line: fits %v outside %v", lp.fits, lp.outside)
	}
	// Points in all four corners and the middle: no corner is free.
	var xs, ys []float64
	for i := range 11 {
		for j := range 11 {
			xs, ys = append(xs, float64(i)), append(ys, float64(j))
		}
	}
	full := []Series{{Label: "a long method name", X: xs, Y: ys}}
	f, err = NewPlot(full, PlotOptions{Points: true})
	if err != nil {
		t.Fatal(err)
	}
	if lp := drawn(f, 3.3*vg.Inch, 2.4*vg.Inch); lp.fits || !lp.outside {
		t.Fatalf("full frame: fits %v outside %v", lp.fits, lp.outside)
	}
	// covers itself: a segment crossing the rectangle without a vertex in it.
	r := vg.Rectangle{Min: vg.Point{X: 10, Y: 10}, Max: vg.Point{X: 20, Y: 20}}
	if !segmentMeets(vg.Point{X: 0, Y: 15}, vg.Point{X: 30, Y: 15}, r) || segmentMeets(vg.Point{X: 0, Y: 0}, vg.Point{X: 30, Y: 5}, r) {
		t.Error("segmentMeets")
	}
}

// Curves of bandMin points or more with a spread get a ± band (a
// polygon), shorter ones error bars.
func TestBandOrErrorBars(t *testing.T) {
	hasBand := func(n int) bool {
		s := Series{Label: "a"}
		for i := range n {
			s.X, s.Y, s.YErr = append(s.X, float64(i+1)), append(s.Y, 1/float64(i+1)), append(s.YErr, 0.01)
		}
		p := plot.New()
		d := xyErr{s: s}
		for i := range n {
			d.idx = append(d.idx, i)
		}
		sty, _ := StyleFor("", 0, 0)
		if _, _, err := addSeriesLayers(p, d, 0, PlotOptions{Lines: true}, sty); err != nil {
			t.Fatal(err)
		}
		// The plot's layers are private: look for the band's fill (a path
		// through 2n points) among what it draws.
		rc := &recorder.Canvas{}
		p.Draw(draw.Canvas{Canvas: rc, Rectangle: vg.Rectangle{Max: vg.Point{X: 6 * vg.Inch, Y: 4 * vg.Inch}}})
		for _, a := range rc.Actions {
			if f, ok := a.(*recorder.Fill); ok && len(f.Path) >= 2*n {
				return true
			}
		}
		return false
	}
	if !hasBand(bandMin) {
		t.Errorf("%d points: no band", bandMin)
	}
	if hasBand(bandMin - 1) {
		t.Errorf("%d points: a band", bandMin-1)
	}
}

// PNG files have the requested resolution; PDF files embed a subset of
// the font (small, Identity-H) and set ρ as text; SVG text names generic
// fallback families; the same figure gives the same PDF bytes.
func TestOutputFormats(t *testing.T) {
	dir := t.TempDir()
	s := []Series{{Label: "margin", X: []float64{0.2}, Y: []float64{35}}, {Label: "triplet", X: []float64{0.3}, Y: []float64{36}}}
	opt := PlotOptions{Title: "ρ vs R@1", XLabel: "ρ", YLabel: "s_{i} / Σ_{j} s_{j}", Width: 3 * vg.Inch, Height: 2 * vg.Inch, DPI: 200}
	pngPath := filepath.Join(dir, "f.png")
	if err := SaveSeries(pngPath, s, opt); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	cfg, err := png.DecodeConfig(fh)
	if err != nil || cfg.Width != 600 || cfg.Height != 400 {
		t.Errorf("PNG %d×%d (%v), want 600×400 at 200 dpi", cfg.Width, cfg.Height, err)
	}
	pdf1, pdf2 := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "b.pdf")
	for _, p := range []string{pdf1, pdf2} {
		if err := SaveSeries(p, s, opt); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(pdf1)
	b, _ := os.ReadFile(pdf2)
	if !bytes.Equal(a, b) {
		t.Error("the same figure gave two different PDFs")
	}
	if len(a) > 60000 || !bytes.Contains(a, []byte("/FontFile2")) || !bytes.Contains(a, []byte("Identity-H")) {
		t.Errorf("PDF: %d bytes, subset TrueType embedded: %v", len(a), bytes.Contains(a, []byte("/FontFile2")))
	}
	svgPath := filepath.Join(dir, "f.svg")
	if err := SaveSeries(svgPath, s, opt); err != nil {
		t.Fatal(err)
	}
	sv, _ := os.ReadFile(svgPath)
	fam := regexp.MustCompile(`font-family:[^;"]*`).FindAll(sv, -1)
	if len(fam) == 0 {
		t.Fatal("SVG names no font family")
	}
	for _, f := range fam {
		if !bytes.HasSuffix(f, []byte("sans-serif")) {
			t.Errorf("SVG %s: no generic fallback", f)
		}
	}
}

// The two panels of a curves figure share one legend, on the right panel.
func TestCurvesOneLegend(t *testing.T) {
	cub, _ := cubAndOmniglot(t)
	p := filepath.Join(t.TempDir(), "c.svg")
	if _, err := SaveCurves(p, cub, []string{"loss"}, "R@1", false, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), ">margin (n = 3)<"); n != 1 {
		t.Errorf("legend entry margin drawn %d times, want once", n)
	}
}

// The PDF canvas embeds images and survives unbalanced Push/Pop.
func TestPDFCanvasImage(t *testing.T) {
	c := newPDFCanvas(2*vg.Inch, 2*vg.Inch)
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	c.Push()
	c.DrawImage(vg.Rectangle{Max: vg.Point{X: vg.Inch, Y: vg.Inch}}, img)
	c.DrawImage(vg.Rectangle{Min: vg.Point{X: vg.Inch, Y: vg.Inch}, Max: vg.Point{X: 2 * vg.Inch, Y: 2 * vg.Inch}}, img)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("/Subtype /Image")); n != 2 {
		t.Errorf("%d images in the PDF, want 2", n)
	}
}
