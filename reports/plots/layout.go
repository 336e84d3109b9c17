package plots

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// fitTitle breaks p's title at spaces so that no line is wider than w,
// and shrinks its text (down to minTextSize) when a single word still is:
// a title never runs past the figure's edges.
func fitTitle(p *plot.Plot, w vg.Length) {
	st := &p.Title.TextStyle
	if p.Title.Text == "" || w <= 0 {
		return
	}
	p.Title.Text = wrapText(*st, p.Title.Text, w)
	for widest(*st, p.Title.Text) > w && st.Font.Size > minTextSize {
		st.Font.Size = max(minTextSize, st.Font.Size*0.9)
		p.Title.Text = wrapText(*st, strings.Join(strings.Fields(p.Title.Text), " "), w)
	}
}

// minTextSize is the smallest text a figure shrinks to.
const minTextSize = vg.Length(5)

// wrapText breaks s greedily at spaces into lines of width at most w
// (a word wider than w takes a line of its own); existing line breaks
// are kept.
func wrapText(st text.Style, s string, w vg.Length) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			if line != "" && st.Width(line+" "+word) > w {
				out = append(out, line)
				line = word
				continue
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// widest is the width of s's widest line.
func widest(st text.Style, s string) vg.Length {
	var w vg.Length
	for _, l := range strings.Split(s, "\n") {
		w = max(w, st.Width(l))
	}
	return w
}

// minFrameShare is the smallest share of a figure's width the data frame
// keeps when the legend stands right of it; below it the legend goes
// under the frame instead.
const minFrameShare = 0.55

// legendColumns is how many columns a legend of entries of width ew
// (thumbnail and text) fits into width w, at least one.
func legendColumns(n int, ew, gap, w vg.Length) int {
	if n <= 1 || ew <= 0 {
		return 1
	}
	k := int((w + gap) / (ew + gap))
	return max(1, min(n, k))
}

// legendWarning is the note SavePlots gives when even a legend under the
// frame, in columns and smaller text, does not fit the figure.
func legendWarning(n int) string {
	return fmt.Sprintf("%sthe legend of %d entries does not fit the figure; make it larger (--width/--height) or name the curves shorter (--rename)", layoutPrefix, n)
}

// layoutPrefix starts the figure notes that are about its layout rather
// than about points not drawn.
const layoutPrefix = "layout: "

// SplitNotes separates a figure's notes into the points that could not be
// drawn and the warnings about its layout.
func SplitNotes(notes []string) (notDrawn, layout []string) {
	for _, n := range notes {
		if s, ok := strings.CutPrefix(n, layoutPrefix); ok {
			layout = append(layout, s)
		} else {
			notDrawn = append(notDrawn, n)
		}
	}
	return notDrawn, layout
}
