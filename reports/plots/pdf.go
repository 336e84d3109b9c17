package plots

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// pdfCanvas draws a figure into a one-page PDF with go-pdf/fpdf. Text is
// set in the figure's TrueType fonts as UTF-8 fonts, which fpdf embeds as
// a subset of the glyphs used (Identity-H): the file stays small, every
// character (ρ, Σ, −) is the font's, and the text can be searched.
//
// vg draws with the origin at the bottom left and y up, as PDF does; fpdf
// takes coordinates from the top left. Passing (x, h−y) to fpdf, which
// writes (x, h−y') back, gives PDF the point (x, y) in the current
// transformation, so Rotate, Translate and Scale are plain PDF cm
// operators.
type pdfCanvas struct {
	doc   *fpdf.Fpdf
	w, h  vg.Length
	fonts map[string]*pdfFont // by the figure's font name
	nimg  int                 // images registered, for their names
	stack []pdfState
	err   error
}

// pdfState is what Push saves and Pop restores (PDF's q/Q restores the
// same in the file).
type pdfState struct {
	col   color.Color
	width vg.Length
	dash  []vg.Length
	offs  vg.Length
}

// pdfEpoch is the creation date of every figure, so the same figure gives
// the same bytes.
var pdfEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func newPDFCanvas(w, h vg.Length) *pdfCanvas {
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: w.Points(), Ht: h.Points()}})
	doc.SetCreationDate(pdfEpoch)
	doc.SetModificationDate(pdfEpoch)
	doc.SetCatalogSort(true)
	doc.SetProducer("dmlbench (gonum/plot, go-pdf/fpdf)", false)
	doc.SetMargins(0, 0, 0)
	doc.SetAutoPageBreak(false, 0)
	doc.AddPage()
	doc.TransformBegin()
	c := &pdfCanvas{doc: doc, w: w, h: h, fonts: map[string]*pdfFont{}, stack: []pdfState{{}}}
	vg.Initialize(c)
	return c
}

func (c *pdfCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

func (c *pdfCanvas) top() *pdfState { return &c.stack[len(c.stack)-1] }

// y converts a vg ordinate for fpdf.
func (c *pdfCanvas) y(v vg.Length) float64 { return c.h.Points() - v.Points() }

func (c *pdfCanvas) SetLineWidth(w vg.Length) {
	c.top().width = w
	c.doc.SetLineWidth(w.Points())
}

func (c *pdfCanvas) SetLineDash(dashes []vg.Length, offs vg.Length) {
	c.top().dash, c.top().offs = append([]vg.Length(nil), dashes...), offs
	d := make([]float64, len(dashes))
	for i, v := range dashes {
		d[i] = v.Points()
	}
	c.doc.SetDashPattern(d, offs.Points())
}

func (c *pdfCanvas) SetColor(col color.Color) {
	if col == nil {
		col = color.Black
	}
	c.top().col = col
	r, g, b, a := col.RGBA()
	alpha := float64(a) / 0xffff
	// Un-premultiply: color.Color values are alpha-premultiplied.
	un := func(v uint32) int {
		if a == 0 {
			return 0
		}
		return int(math.Round(float64(v) / float64(a) * 255))
	}
	c.doc.SetDrawColor(un(r), un(g), un(b))
	c.doc.SetFillColor(un(r), un(g), un(b))
	c.doc.SetTextColor(un(r), un(g), un(b))
	c.doc.SetAlpha(alpha, "Normal")
}

func (c *pdfCanvas) cm(a, b, cc, d, e, f float64) {
	c.doc.Transform(fpdf.TransformMatrix{A: a, B: b, C: cc, D: d, E: e, F: f})
}

func (c *pdfCanvas) Rotate(rad float64) {
	s, co := math.Sincos(rad)
	c.cm(co, s, -s, co, 0, 0)
}

func (c *pdfCanvas) Translate(pt vg.Point) { c.cm(1, 0, 0, 1, pt.X.Points(), pt.Y.Points()) }

func (c *pdfCanvas) Scale(x, y float64) { c.cm(x, 0, 0, y, 0, 0) }

func (c *pdfCanvas) Push() {
	c.stack = append(c.stack, *c.top())
	c.doc.TransformBegin()
}

func (c *pdfCanvas) Pop() {
	if len(c.stack) == 1 {
		return
	}
	c.stack = c.stack[:len(c.stack)-1]
	c.doc.TransformEnd()
}

// path sends p to fpdf, arcs as polylines of at most π/32 per segment.
func (c *pdfCanvas) path(p vg.Path) {
	started := false
	to := func(pt vg.Point) {
		if started {
			c.doc.LineTo(pt.X.Points(), c.y(pt.Y))
		} else {
			c.doc.MoveTo(pt.X.Points(), c.y(pt.Y))
			started = true
		}
	}
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			c.doc.MoveTo(comp.Pos.X.Points(), c.y(comp.Pos.Y))
			started = true
		case vg.LineComp:
			to(comp.Pos)
		case vg.ArcComp:
			n := max(4, int(math.Ceil(math.Abs(comp.Angle)/(math.Pi/32))))
			for k := 0; k <= n; k++ {
				s, co := math.Sincos(comp.Start + comp.Angle*float64(k)/float64(n))
				to(vg.Point{X: comp.Pos.X + comp.Radius*vg.Length(co), Y: comp.Pos.Y + comp.Radius*vg.Length(s)})
			}
		case vg.CurveComp:
			switch len(comp.Control) {
			case 1:
				k := comp.Control[0]
				c.doc.CurveTo(k.X.Points(), c.y(k.Y), comp.Pos.X.Points(), c.y(comp.Pos.Y))
			case 2:
				k0, k1 := comp.Control[0], comp.Control[1]
				c.doc.CurveBezierCubicTo(k0.X.Points(), c.y(k0.Y), k1.X.Points(), c.y(k1.Y), comp.Pos.X.Points(), c.y(comp.Pos.Y))
			default:
				to(comp.Pos)
			}
		case vg.CloseComp:
			c.doc.ClosePath()
		}
	}
}

func (c *pdfCanvas) Stroke(p vg.Path) {
	if c.top().width <= 0 {
		return
	}
	c.path(p)
	c.doc.DrawPath("D")
}

func (c *pdfCanvas) Fill(p vg.Path) {
	c.path(p)
	c.doc.DrawPath("F")
}

// FillString sets str with its baseline starting at pt.
func (c *pdfCanvas) FillString(fnt font.Face, pt vg.Point, str string) {
	if fnt.Font.Size == 0 || str == "" {
		return
	}
	name := fnt.Name()
	f, ok := c.fonts[name]
	if !ok {
		var raw bytes.Buffer
		if _, err := fnt.Face.WriteSourceTo(nil, &raw); err != nil {
			c.err = fmt.Errorf("reports: PDF font %s: %w", name, err)
			return
		}
		ps, _ := fnt.Face.Name(nil, sfnt.NameIDPostScript)
		f = &pdfFont{key: pdfFontKey(len(c.fonts), ps), ps: ps}
		c.doc.AddUTF8FontFromBytes(f.key, "", raw.Bytes())
		c.fonts[name] = f
	}
	f.text.WriteString(str)
	c.doc.SetFont(f.key, "", fnt.Font.Size.Points())
	c.doc.Text(pt.X.Points(), c.y(pt.Y), str)
}

func (c *pdfCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		c.err = fmt.Errorf("reports: PDF image: %w", err)
		return
	}
	opt := fpdf.ImageOptions{ImageType: "png"}
	c.nimg++
	name := fmt.Sprintf("image%d", c.nimg)
	c.doc.RegisterImageOptionsReader(name, opt, &buf)
	sz := rect.Size()
	c.doc.ImageOptions(name, rect.Min.X.Points(), c.y(rect.Max.Y), sz.X.Points(), sz.Y.Points(), false, opt, 0, "")
}

// WriteTo writes the PDF file.
func (c *pdfCanvas) WriteTo(w io.Writer) (int64, error) {
	if c.err != nil {
		return 0, c.err
	}
	for len(c.stack) > 1 {
		c.Pop()
	}
	c.doc.TransformEnd()
	var buf bytes.Buffer
	if err := c.doc.Output(&buf); err != nil {
		return 0, fmt.Errorf("reports: PDF: %w", err)
	}
	b := buf.Bytes()
	for _, f := range c.fonts {
		b = f.tagSubset(b)
	}
	n, err := w.Write(b)
	return int64(n), err
}

// pdfFont is a font embedded in a figure's PDF: the key fpdf knows it by,
// its PostScript name and the text set in it.
type pdfFont struct {
	key, ps string
	text    strings.Builder
}

// pdfFontKey is the fpdf family of the i-th font of a figure: fpdf names an
// embedded subset "utf8" + key, which tagSubset replaces by the subset
// tag, "+" and the PostScript name (PDF 1.7 §9.6.4). The key is as long
// as the tag and "+" less the 4 bytes of "utf8", so the replacement keeps
// every byte offset of the file (its xref table) valid.
func pdfFontKey(i int, ps string) string {
	k := fmt.Sprintf("dmlbf%d", i)
	if n := len(ps) + 3; n > len(k) {
		k += strings.Repeat("z", n-len(k))
	}
	return k
}

// tagSubset names f's subset in the PDF file b "ABCDEF+PostScriptName",
// the six capitals a hash of the text set in it (same figure, same tag).
func (f *pdfFont) tagSubset(b []byte) []byte {
	old := "/utf8" + f.key
	tag := subsetTag(f.ps + "\x00" + f.text.String())
	repl := "/" + tag + "+" + f.ps
	if len(repl) != len(old) || !validPSName(f.ps) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(old), []byte(repl))
}

// subsetTag is six capital letters derived from s.
func subsetTag(s string) string {
	h := sha256.Sum256([]byte(s))
	var t [6]byte
	for i := range t {
		t[i] = 'A' + h[i]%26
	}
	return string(t[:])
}

// validPSName reports whether s can stand in a PDF name unescaped.
func validPSName(s string) bool {
	for _, r := range s {
		if r <= ' ' || r > '~' || strings.ContainsRune("()<>[]{}/%#", r) {
			return false
		}
	}
	return s != ""
}
