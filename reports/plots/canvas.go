package plots

import (
	"bytes"
	"fmt"
	"io"
	"regexp"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgeps"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// newCanvas is a w × h canvas that writes format: raster formats at dpi,
// PDF with subset fonts (pdfCanvas), SVG with fallback font families.
func newCanvas(format string, w, h vg.Length, dpi int) (vg.CanvasWriterTo, error) {
	if dpi < 1 {
		return nil, fmt.Errorf("reports: resolution %d dpi: want ≥ 1", dpi)
	}
	raster := func() *vgimg.Canvas { return vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi)) }
	switch format {
	case "png":
		return pngCanvas{PngCanvas: vgimg.PngCanvas{Canvas: raster()}, dpi: dpi}, nil
	case "jpg", "jpeg":
		return vgimg.JpegCanvas{Canvas: raster()}, nil
	case "tif", "tiff":
		return vgimg.TiffCanvas{Canvas: raster()}, nil
	case "pdf":
		return newPDFCanvas(w, h), nil
	case "svg":
		return svgCanvas{vgsvg.New(w, h)}, nil
	case "eps":
		return epsCanvas{vgeps.New(w, h)}, nil
	}
	return nil, fmt.Errorf("reports: unknown image format %q", format)
}

// svgCanvas is vgsvg's canvas whose font-family names generic fallbacks
// after the font, so the text renders where Liberation is not installed.
type svgCanvas struct{ *vgsvg.Canvas }

var svgFamily = regexp.MustCompile(`font-family:\s*"?Liberation (Sans|Serif|Mono)"?`)

// svgFallback is the family list that replaces each Liberation family.
var svgFallback = map[string]string{
	"Sans":  "font-family:'Liberation Sans',Arial,Helvetica,sans-serif",
	"Serif": "font-family:'Liberation Serif','Times New Roman',Times,serif",
	"Mono":  "font-family:'Liberation Mono','Courier New',monospace",
}

func (c svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.Canvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	out := svgFamily.ReplaceAllFunc(buf.Bytes(), func(m []byte) []byte {
		return []byte(svgFallback[string(svgFamily.FindSubmatch(m)[1])])
	})
	n, err := w.Write(out)
	return int64(n), err
}

// epsCanvas is vgeps's canvas with the header EPS readers look for: vgeps
// writes "%%!PS-Adobe-3.0" (a doubled percent sign) where the format
// wants "%!PS-Adobe-3.0".
type epsCanvas struct{ *vgeps.Canvas }

func (c epsCanvas) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.Canvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	b := buf.Bytes()
	if bytes.HasPrefix(b, []byte("%%!PS")) {
		b = b[1:]
	}
	n, err := w.Write(b)
	return int64(n), err
}

// NewCanvas is a w × h canvas writing format ("png", "pdf", "svg", "eps",
// "jpg", "tif") as SavePlots writes it: PNG with its resolution (pHYs),
// PDF with tagged font subsets, SVG with fallback fonts.
func NewCanvas(format string, w, h vg.Length, dpi int) (vg.CanvasWriterTo, error) {
	return newCanvas(format, w, h, dpi)
}

// FormatOf is the image format of path by its extension.
func FormatOf(path string) (string, error) { return plotFormat(path) }
