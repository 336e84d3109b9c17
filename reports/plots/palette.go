package plots

import (
	"fmt"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"image/color"
	"sort"
	"strings"
)

// Palette is the sequence of series colours of a figure: style index i
// takes colour i mod len.
type Palette []color.RGBA

// okabeIto is the colour-blind-safe qualitative palette of Okabe & Ito
// 2008 (blue, vermillion, bluish green, reddish purple, orange, sky blue,
// black, yellow), ordered so that the first colours differ most in
// lightness and under deuteranopia and protanopia; yellow, which is weak
// on white, comes last.
var okabeIto = Palette{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

// palettes are the palettes PaletteNamed knows.
var palettes = map[string]Palette{
	PaletteOkabeIto: okabeIto,
	"tab10":         Palette(tab10),
	// grey: four lightness steps that stay apart in a grey-scale print
	// (the series also differ in dash and marker).
	"grey": {{0, 0, 0, 255}, {100, 100, 100, 255}, {160, 160, 160, 255}, {60, 60, 60, 255}},
}

// PaletteOkabeIto is the name of the default palette.
const PaletteOkabeIto = "okabe-ito"

// PaletteNames lists the palettes' names, sorted.
func PaletteNames() []string {
	var n []string
	for k := range palettes {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// PaletteNamed is the palette called name ("" is PaletteOkabeIto), or a
// list of comma-separated #rrggbb colours.
func PaletteNamed(name string) (Palette, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return okabeIto, nil
	}
	if p, ok := palettes[name]; ok {
		return p, nil
	}
	if strings.HasPrefix(name, "#") {
		var p Palette
		for _, s := range strings.Split(name, ",") {
			var r, g, b uint8
			s = strings.TrimSpace(s)
			if n, err := fmt.Sscanf(s, "#%02x%02x%02x", &r, &g, &b); err != nil || n != 3 || len(s) != 7 {
				return nil, fmt.Errorf("reports: palette colour %q: want #rrggbb", s)
			}
			p = append(p, color.RGBA{r, g, b, 255})
		}
		return p, nil
	}
	return nil, fmt.Errorf("reports: unknown palette %q: want %s, or #rrggbb,#rrggbb,…%s", name, strings.Join(PaletteNames(), ", "), suggest.Hint(name, PaletteNames()))
}

// color is the colour of style index i (the default palette when p is
// empty).
func (p Palette) color(i int) color.Color {
	if len(p) == 0 {
		p = okabeIto
	}
	return p[i%len(p)]
}
