package plots

import (
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// scriptText is a text handler that draws _{…} as a subscript and ^{…} as
// a superscript (0.7 of the size, lowered or raised), and everything else
// as text.Plain does: "s_{i} / Σ_{j} s_{j}", "10^{−2}". Only the braced
// forms are markup, so names such as embed_dim stay as written.
type scriptText struct {
	Fonts *font.Cache
}

var _ text.Handler = scriptText{}

// scriptScale is the size of a sub- or superscript relative to the text.
const scriptScale = 0.7

// run is a piece of one line: text at a baseline shift (0: on the line,
// -1: subscript, +1: superscript).
type run struct {
	s     string
	shift int
}

// splitScripts cuts line into runs at its _{…} and ^{…} markup; an
// unclosed brace is text.
func splitScripts(line string) []run {
	var out []run
	for {
		i := strings.IndexAny(line, "_^")
		for i >= 0 && (i+1 >= len(line) || line[i+1] != '{' || !strings.Contains(line[i+2:], "}")) {
			j := strings.IndexAny(line[i+1:], "_^")
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			if line != "" {
				out = append(out, run{s: line})
			}
			return out
		}
		if i > 0 {
			out = append(out, run{s: line[:i]})
		}
		end := strings.IndexByte(line[i+2:], '}') + i + 2
		shift := -1
		if line[i] == '^' {
			shift = 1
		}
		out = append(out, run{s: line[i+2 : end], shift: shift})
		line = line[end+1:]
	}
}

func (h scriptText) Cache() *font.Cache { return h.Fonts }

func (h scriptText) Extents(fnt font.Font) font.Extents {
	f := h.Fonts.Lookup(fnt, fnt.Size)
	return f.Extents()
}

func (h scriptText) Lines(txt string) []string {
	return strings.Split(strings.TrimRight(txt, "\n"), "\n")
}

// face is the face of a run of shift in fnt.
func (h scriptText) face(fnt font.Font, shift int) font.Face {
	if shift != 0 {
		fnt.Size = vg.Length(scriptScale) * fnt.Size
	}
	return h.Fonts.Lookup(fnt, fnt.Size)
}

// rise is the baseline shift of a run: a third of the ascent down for a
// subscript, 0.45 of it up for a superscript.
func rise(ext font.Extents, shift int) vg.Length {
	switch shift {
	case -1:
		return -ext.Ascent / 3
	case 1:
		return ext.Ascent * 0.45
	}
	return 0
}

// width is the width of one line.
func (h scriptText) width(line string, fnt font.Font) vg.Length {
	var w vg.Length
	for _, r := range splitScripts(line) {
		f := h.face(fnt, r.shift)
		w += f.Width(r.s)
	}
	return w
}

func (h scriptText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	ext := h.Extents(fnt)
	height, depth = ext.Ascent, ext.Descent
	for _, r := range splitScripts(txt) {
		f := h.face(fnt, r.shift)
		width += f.Width(r.s)
		se := f.Extents()
		height = max(height, rise(ext, r.shift)+se.Ascent)
		depth = max(depth, se.Descent-rise(ext, r.shift))
	}
	return width, height, depth
}

// Draw draws txt as text.Plain does (alignment, rotation, lines), each
// run of a line in its own size and at its own baseline.
func (h scriptText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	base := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	ext := base.Extents()
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		defer c.Pop()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - ext.Ascent
	for i, line := range lines {
		x := pt.X + vg.Length(sty.XAlign)*h.width(line, sty.Font)
		y := pt.Y + vg.Length(len(lines)-i)*sty.Font.Size
		for _, r := range splitScripts(line) {
			f := h.face(sty.Font, r.shift)
			c.FillString(f, vg.Point{X: x, Y: y + rise(ext, r.shift)}, r.s)
			x += f.Width(r.s)
		}
	}
}
