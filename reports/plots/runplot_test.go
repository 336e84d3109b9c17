package plots

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestFigureFlagsOptions(t *testing.T) {
	f := FigureFlags{Out: "x.png", Style: StyleDefault, Width: 6, Height: 4, DPI: DefaultDPI, Palette: PaletteOkabeIto}
	opt, err := f.Options("T", "X", "Y", nil)
	if err != nil || opt.Title != "T" || opt.XLabel != "X" || opt.YLabel != "Y" || opt.NoTitle {
		t.Fatalf("defaults: %+v, %v", opt, err)
	}
	f.TitleSet, f.YLabelSet, f.YLabel = true, true, "given"
	if opt, _ = f.Options("T", "X", "Y", nil); !opt.NoTitle || opt.YLabel != "given" {
		t.Fatalf("--title \"\" and --ylabel: %+v", opt)
	}
	for _, bad := range []FigureFlags{{Style: StyleDefault, Width: 6, Height: 4}, {Out: "x.png", Style: "papr", Width: 6, Height: 4}} {
		if _, err := bad.Options("", "", "", nil); !usage.Is(err) {
			t.Errorf("%+v: %v, want a usage error", bad, err)
		}
	}
}

func TestRunPlotRefusals(t *testing.T) {
	runs := filepath.Join("..", "testdata", "mixed")
	fig := FigureFlags{Out: filepath.Join(t.TempDir(), "f.png"), Style: StyleDefault, Width: 6, Height: 4, DPI: DefaultDPI, Palette: PaletteOkabeIto}
	for _, c := range []struct {
		p    RunPlot
		want string
	}{
		{RunPlot{Kind: "rho", Figure: fig, Source: "final"}, "rho needs at least one run directory"},
		{RunPlot{Kind: "rho", Paths: []string{runs}, Figure: fig, Source: "bset"}, `--source must be final or best (got "bset")`},
		{RunPlot{Kind: "sweep", Paths: []string{runs}, Figure: fig, Source: "final"}, "sweep needs --param"},
		{RunPlot{Kind: "recall", Paths: []string{runs}, Figure: fig, Source: "final", GroupBy: "nokey"}, `plot recall: unknown --group-by key "nokey"`},
		{RunPlot{Kind: "spectrum", Figure: fig, Source: "final", Spectrum: SpectrumInputs{Normalize: "sum"}}, "spectrum needs run directories"},
	} {
		_, err := c.p.Draw()
		if !usage.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error with %q", c.p.Kind, err, c.want)
		}
	}
}
