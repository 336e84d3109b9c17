package plots

import (
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/reports"
)

// FigureFlags are a figure's settings as the command line gives them; the
// *Set fields say which were given, so that defaults fill in the rest.
type FigureFlags struct {
	Out                            string
	Title, Caption, XLabel, YLabel string
	TitleSet, XLabelSet, YLabelSet bool
	Style                          string
	Width, Height                  float64
	WidthSet, HeightSet            bool
	DPI                            int
	Rename                         []string // KEY=Name pairs (reports.ParseNames)
	NamesFile                      string
	Palette                        string
	NoRunCounts                    bool
}

// Sized checks the style, size and resolution (usage errors) and returns
// options of that size.
func (f FigureFlags) Sized() (PlotOptions, error) {
	w, h, sty, err := FigureSize(f.Style, f.Width, f.Height, f.WidthSet, f.HeightSet, f.DPI)
	if err != nil {
		return PlotOptions{}, usage.Errorf("%v", err)
	}
	return PlotOptions{Width: w, Height: h, DPI: f.DPI, Style: sty}, nil
}

// Label sets opt's names, palette, axis labels and legend counts from the
// settings; --style paper draws no title unless one was given.
func (f FigureFlags) Label(opt *PlotOptions) error {
	var err error
	if opt.Names, err = reports.ParseNames(f.Rename, f.NamesFile); err != nil {
		return usage.Errorf("%v", err)
	}
	if opt.Palette, err = PaletteNamed(f.Palette); err != nil {
		return usage.Errorf("--palette: %v", err)
	}
	if f.XLabelSet {
		opt.XLabel = f.XLabel
	}
	if f.YLabelSet {
		opt.YLabel = f.YLabel
	}
	opt.NoRunCounts = f.NoRunCounts
	if f.Style == StylePaper && !f.TitleSet {
		opt.NoTitle = true
	}
	return nil
}

// Options checks the settings and returns the options of a figure whose
// default title and axis labels are given: the output file is required,
// a given title replaces the default ("" draws none). check, when not nil,
// runs between the size's checks and the labels' (a command's own
// settings).
func (f FigureFlags) Options(title, xlabel, ylabel string, check func() error) (PlotOptions, error) {
	if f.Out == "" {
		return PlotOptions{}, usage.Errorf("--out FILE (.png, .pdf, .svg, .eps, .jpg or .tif) is required")
	}
	opt, err := f.Sized()
	if err != nil {
		return PlotOptions{}, err
	}
	if check != nil {
		if err := check(); err != nil {
			return PlotOptions{}, err
		}
	}
	opt.Title, opt.XLabel, opt.YLabel, opt.Caption = title, xlabel, ylabel, f.Caption
	if f.TitleSet {
		opt.Title = f.Title
		opt.NoTitle = opt.Title == ""
	}
	return opt, f.Label(&opt)
}
