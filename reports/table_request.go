package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
)

// CheckFormat refuses a table format or colour mode (auto, always, never)
// it does not know (usage errors); it returns the format in lower case.
func CheckFormat(format, color string) (string, error) {
	format = strings.ToLower(format)
	ok := false
	for _, f := range Formats {
		ok = ok || f == format
	}
	if !ok {
		return "", usage.Errorf("--format must be one of %s (got %q)%s", strings.Join(Formats, ", "), format, suggest.Hint(format, Formats))
	}
	if color != "auto" && color != "always" && color != "never" {
		return "", usage.Errorf("--color must be auto, always or never (got %q)%s", color, suggest.Hint(color, []string{"auto", "always", "never"}))
	}
	return format, nil
}

// PaperOptions set a table up for a paper: the LaTeX layout, the std on
// the mean's line, the digits and the multiple-comparison correction.
type PaperOptions struct {
	Layout      string
	InlineStd   bool
	Decimals    int
	DecimalsSet bool
	Correction  string
}

// Apply checks the settings (usage errors) and sets them in opt and fo.
func (p PaperOptions) Apply(opt *Options, fo *FormatOptions) error {
	var err error
	if fo.Layout, err = CheckLayout(p.Layout); err != nil {
		return usage.Errorf("--layout: %v", err)
	}
	fo.InlineStd = p.InlineStd
	if p.DecimalsSet {
		d := p.Decimals
		if d < 0 || d > 10 {
			return usage.Errorf("--decimals must lie in [0, 10] (got %d)", d)
		}
		opt.Decimals = &d
	}
	if opt.Correction, err = ParseCorrection(p.Correction); err != nil {
		return usage.Errorf("--correction: %v", err)
	}
	return nil
}

// TableRequest is a table of run.json files: the runs, how they are
// aggregated, and how the table is set.
type TableRequest struct {
	Paths             []string
	Options           Options
	MetricsSet        bool // the metric columns were given (resolved against the runs)
	IncludeUnfinished bool
	Paper             PaperOptions
	Format            FormatOptions
	// Rename and NamesFile give the rows their display names (ParseNames).
	Rename    []string
	NamesFile string
	// Notes are added under the table after the skipped runs'.
	Notes []string
}

// Build loads the runs and aggregates them; the warnings (runs that did
// not load, names that match no row) go to warn. It returns the report and
// the format options with the paper's settings.
func (t TableRequest) Build(warn io.Writer) (*Report, FormatOptions, error) {
	opt, fo := t.Options, t.Format
	loaded, err := LoadRuns(t.Paths, LoadOptions{IncludeUnfinished: t.IncludeUnfinished})
	if err != nil {
		return nil, fo, err
	}
	for _, w := range loaded.Warnings {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	if len(loaded.Runs) == 0 {
		return nil, fo, fmt.Errorf("no finished runs under %s (%d unfinished: %s)", strings.Join(t.Paths, " "), len(loaded.Skipped), strings.Join(loaded.Skipped, ", "))
	}
	if t.MetricsSet {
		if opt.Metrics, err = ResolveMetrics(opt.Metrics, loaded.Runs, opt); err != nil {
			return nil, fo, usage.Errorf("--metrics: %v", err)
		}
	}
	if err := t.Paper.Apply(&opt, &fo); err != nil {
		return nil, fo, err
	}
	rep, err := Aggregate(loaded.Runs, opt)
	if err != nil {
		return nil, fo, err
	}
	names, err := ParseNames(t.Rename, t.NamesFile)
	if err != nil {
		return nil, fo, usage.Errorf("%v", err)
	}
	for _, k := range rep.Rename(names) {
		fmt.Fprintf(warn, "warning: --rename %q matches no row\n", k)
	}
	if len(loaded.Skipped) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d unfinished run(s) skipped: %s", len(loaded.Skipped), strings.Join(loaded.Skipped, ", ")))
	}
	rep.Notes = append(rep.Notes, t.Notes...)
	return rep, fo, nil
}
