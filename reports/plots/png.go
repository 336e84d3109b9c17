package plots

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"

	"gonum.org/v1/plot/vg/vgimg"
)

// pngCanvas is vgimg's PNG canvas whose file states its resolution in a
// pHYs chunk: without one, LaTeX (pdflatex's graphicx) and most tools place
// a PNG at 72 dpi, so a 300-dpi figure would come out 4× too large.
type pngCanvas struct {
	vgimg.PngCanvas
	dpi int
}

func (c pngCanvas) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	if _, err := c.PngCanvas.WriteTo(&buf); err != nil {
		return 0, err
	}
	out, err := withPHYs(buf.Bytes(), c.dpi)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(out)
	return int64(n), err
}

// pngSignature is the 8 bytes every PNG file starts with.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// withPHYs inserts a pHYs chunk (pixels per metre, unit 1 = metre) for dpi
// after the IHDR chunk of the PNG file b, which Go's encoder writes first.
func withPHYs(b []byte, dpi int) ([]byte, error) {
	// signature, then IHDR: length (4) type (4) data (13) CRC (4).
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	if len(b) < ihdrEnd || !bytes.Equal(b[:8], pngSignature) || string(b[12:16]) != "IHDR" {
		return nil, errors.New("reports: PNG encoder output does not start with IHDR")
	}
	ppm := uint32(math.Round(float64(dpi) / 0.0254))
	chunk := make([]byte, 4+4+9+4)
	binary.BigEndian.PutUint32(chunk[0:], 9)
	copy(chunk[4:], "pHYs")
	binary.BigEndian.PutUint32(chunk[8:], ppm)
	binary.BigEndian.PutUint32(chunk[12:], ppm)
	chunk[16] = 1
	binary.BigEndian.PutUint32(chunk[17:], crc32.ChecksumIEEE(chunk[4:17]))
	out := make([]byte, 0, len(b)+len(chunk))
	out = append(out, b[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, b[ihdrEnd:]...), nil
}

// PNGResolution reads the resolution a PNG file states in its pHYs chunk,
// in dots per inch (ok false when it has none or its unit is not the
// metre).
func PNGResolution(b []byte) (dpiX, dpiY float64, ok bool) {
	if len(b) < 8 || !bytes.Equal(b[:8], pngSignature) {
		return 0, 0, false
	}
	for i := 8; i+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[i:]))
		typ := string(b[i+4 : i+8])
		if i+12+n > len(b) {
			return 0, 0, false
		}
		if typ == "pHYs" && n == 9 && b[i+16] == 1 {
			x := float64(binary.BigEndian.Uint32(b[i+8:])) * 0.0254
			y := float64(binary.BigEndian.Uint32(b[i+12:])) * 0.0254
			return x, y, true
		}
		if typ == "IDAT" {
			return 0, 0, false
		}
		i += 12 + n
	}
	return 0, 0, false
}
