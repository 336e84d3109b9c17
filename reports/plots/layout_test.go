package plots

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// manySeries is n straight lines with long names.
func manySeries(n int) []Series {
	var out []Series
	for i := range n {
		out = append(out, Series{Label: fmt.Sprintf("multisimilarity/distance-weighted-%02d", i),
			X: []float64{1, 2, 3}, Y: []float64{float64(i), float64(i) + 1, float64(i) + 2}})
	}
	return out
}

// frameWidth is the width of the data frame of an SVG figure: the span of
// the x axis line, the longest horizontal path.
func frameWidth(t *testing.T, svg []byte) float64 {
	t.Helper()
	re := regexp.MustCompile(`d="M([0-9.]+),([0-9.]+)L([0-9.]+),([0-9.]+)"`)
	w := 0.0
	for _, m := range re.FindAllSubmatch(svg, -1) {
		x0, _ := strconv.ParseFloat(string(m[1]), 64)
		y0, _ := strconv.ParseFloat(string(m[2]), 64)
		x1, _ := strconv.ParseFloat(string(m[3]), 64)
		y1, _ := strconv.ParseFloat(string(m[4]), 64)
		if y0 == y1 {
			w = max(w, x1-x0)
		}
	}
	return w
}

// A legend of many long names goes under the frame in columns; the frame
// keeps most of the width, and every entry is drawn.
func TestLegendBelowWhenRightIsTooNarrow(t *testing.T) {
	for _, n := range []int{5, 36} {
		p := filepath.Join(t.TempDir(), "l.svg")
		sty, _ := StyleFor(StylePaper, 0, 0)
		opt := PlotOptions{Width: PaperWidth * vg.Inch, Height: PaperHeight * vg.Inch, Style: sty, NoTitle: true}
		f, err := NewPlot(manySeries(n), opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := SavePlots(p, []*Figure{f}, opt.Width, opt.Height, 0); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		for i := range n {
			if !strings.Contains(string(b), fmt.Sprintf("distance-weighted-%02d<", i)) {
				t.Errorf("n=%d: entry %d not drawn", n, i)
			}
		}
		// SVG units are points; the figure is 3.3 in = 237.6 pt wide.
		if w := frameWidth(t, b); w < 0.5*237.6 {
			t.Errorf("n=%d: frame %.0f pt wide of 237.6", n, w)
		}
		warned := len(f.Notes) > 0
		if n == 36 && !warned {
			t.Errorf("36 entries in a 3.3 × 2.4 in figure: no warning")
		}
		if n == 5 && warned {
			t.Errorf("5 entries: unexpected warning %v", f.Notes)
		}
	}
}

// A title wider than the figure is broken into lines that fit.
func TestTitleWraps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.svg")
	sty, _ := StyleFor(StylePaper, 0, 0)
	title := "tune: validation R@1 of every trial of the multisimilarity loss against its learning rate"
	opt := PlotOptions{Title: title, Width: PaperWidth * vg.Inch, Height: PaperHeight * vg.Inch, Style: sty}
	if err := SaveSeries(p, manySeries(1), opt); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if strings.Contains(string(b), ">"+title+"<") {
		t.Fatal("title drawn on one line wider than the figure")
	}
	for _, w := range []string{"tune:", "learning", "rate<"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("title word %q missing", w)
		}
	}
}

// A PNG states its resolution (pHYs), so LaTeX places a 300-dpi figure at
// its size in inches.
func TestPNGStatesResolution(t *testing.T) {
	for _, dpi := range []int{150, 300} {
		p := filepath.Join(t.TempDir(), "r.png")
		opt := PlotOptions{Width: 2 * vg.Inch, Height: 1.5 * vg.Inch, DPI: dpi}
		if err := SaveSeries(p, manySeries(2), opt); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		x, y, ok := PNGResolution(b)
		if !ok || math.Abs(x-float64(dpi)) > 0.05 || math.Abs(y-float64(dpi)) > 0.05 {
			t.Errorf("dpi %d: pHYs says %v × %v (present %v)", dpi, x, y, ok)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("dpi %d: the file with pHYs does not decode: %v", dpi, err)
		}
	}
}

// PDF fonts are subsets named with the standard tag: six capitals, "+",
// the PostScript name.
func TestPDFSubsetTag(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.pdf")
	if err := SaveSeries(p, manySeries(2), PlotOptions{Title: "ρ"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	names := regexp.MustCompile(`/BaseFont /(\S+)`).FindAllSubmatch(b, -1)
	if len(names) == 0 {
		t.Fatal("no font in the PDF")
	}
	for _, m := range names {
		if !regexp.MustCompile(`^[A-Z]{6}\+LiberationSans$`).Match(m[1]) {
			t.Errorf("font %s: want ABCDEF+LiberationSans", m[1])
		}
	}
	// The xref offsets still point at their objects.
	if _, err := pdfObjectsAtXref(b); err != nil {
		t.Error(err)
	}
}

// pdfObjectsAtXref checks that every in-use xref entry of b points at
// "N 0 obj".
func pdfObjectsAtXref(b []byte) (int, error) {
	i := bytes.LastIndex(b, []byte("\nxref\n"))
	if i < 0 {
		return 0, fmt.Errorf("no xref table")
	}
	lines := strings.Split(string(b[i+6:]), "\n")
	var first, n int
	fmt.Sscanf(lines[0], "%d %d", &first, &n)
	for k := 1; k <= n && k < len(lines); k++ {
		var off int
		var gen int
		var use string
		fmt.Sscanf(lines[k], "%d %d %s", &off, &gen, &use)
		if use != "n" {
			continue
		}
		want := fmt.Sprintf("%d 0 obj", first+k-1)
		if off+len(want) > len(b) || string(b[off:off+len(want)]) != want {
			return 0, fmt.Errorf("xref entry %d points at %q", first+k-1, b[off:min(len(b), off+len(want))])
		}
	}
	return n, nil
}
