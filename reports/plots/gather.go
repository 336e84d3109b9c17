package plots

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/reports"
)

// FigurePath is where a figure goes: out itself, or, when out names a
// directory (it ends in a slash or exists as one), out/name.png.
func FigurePath(out, name string) string {
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return filepath.Join(out, name+".png")
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return filepath.Join(out, name+".png")
	}
	return out
}

// CheckGroupBy is an error unless every key is in some run's method (a
// figure's curves are method values; a key no run has would put every
// run under "-").
func CheckGroupBy(runs []reports.LoadedRun, keys []string) error {
	have := reports.MethodKeys(runs)
	for _, k := range keys {
		if !slices.Contains(have, k) {
			return fmt.Errorf("unknown --group-by key %q; the runs' method keys are: %s%s", k, strings.Join(have, ", "), suggest.Hint(k, have))
		}
	}
	return nil
}

// RunStyles is the style index of every method of runs under groupBy
// (MethodStyles), so a method looks the same in every figure of the
// directory.
func RunStyles(runs []reports.LoadedRun, groupBy []string) map[string]int {
	var names []string
	for _, g := range reports.GroupRuns(runs, groupBy) {
		names = append(names, g.Label)
	}
	return MethodStyles(names)
}

// CheckMetric is an error unless some run has metric in its final or
// best metrics (source) or, with history, in its per-epoch metrics; it
// names the metrics the runs have.
func CheckMetric(runs []reports.LoadedRun, metric, source string, history bool) error {
	have := map[string]bool{}
	for _, r := range runs {
		if history {
			for _, e := range r.History {
				for k := range e.Metrics {
					have[k] = true
				}
			}
			continue
		}
		for k := range reports.MetricsOf(r, source) {
			have[k] = true
		}
	}
	if have[metric] {
		return nil
	}
	names := make([]string, 0, len(have))
	for k := range have {
		names = append(names, k)
	}
	sort.Strings(names)
	where := "the runs' " + source + " metrics"
	if history {
		where = "the runs' histories (per-epoch metrics)"
	}
	if len(names) == 0 {
		return fmt.Errorf("no metric %q: %s hold no metric", metric, where)
	}
	return fmt.Errorf("no metric %q in %s; have: %s%s", metric, where, strings.Join(names, ", "), suggest.Hint(metric, names))
}

// MetricLabel is the axis label of metric: with its unit (%) when it is
// a fraction shown in percent (not raw).
func MetricLabel(metric string, raw bool) string {
	if !raw && reports.IsPercentMetric(metric) {
		return metric + " (%)"
	}
	return metric
}

// EmbeddingName names the curve of embedding file e: the method of the
// run.json beside it (labelled as runs are under groupBy, so it takes
// its method's style), else the name of its directory, else the file's.
func EmbeddingName(e string, runs []reports.LoadedRun, groupBy []string) string {
	dir := filepath.Dir(strings.SplitN(e, ".npz:", 2)[0])
	if l, err := reports.LoadRuns([]string{filepath.Join(dir, "run.json")}, reports.LoadOptions{IncludeUnfinished: true}); err == nil && len(l.Runs) == 1 {
		keys := groupBy
		if len(keys) == 0 && len(runs) > 0 {
			keys, _ = reports.VaryingKeys(runs)
		}
		if len(keys) == 0 {
			keys = []string{"loss"}
		}
		return reports.GroupLabel(l.Runs[0].Method, keys)
	}
	if abs, err := filepath.Abs(dir); err == nil && filepath.Base(abs) != string(filepath.Separator) {
		return filepath.Base(abs)
	}
	return strings.TrimSuffix(filepath.Base(e), filepath.Ext(e))
}

// EmbeddingCurve is the spectrum curve of embedding file e named name,
// normalised by mode and cut to top values: its spectrum or, with
// labels, its class-averaged spectrum (named "name (per class)", keyed
// by name), with the number of all-zero classes left out of the average.
func EmbeddingCurve(e, name, labels, mode string, top int) (s Series, skipped int, err error) {
	sp, err := LoadEmbeddingSpectrum(e, labels, labels == "")
	if err != nil {
		return Series{}, 0, err
	}
	sv, label := sp.Singular, name
	if labels != "" {
		sv, label = sp.PerClass, name+" (per class)"
	}
	s, err = EmbeddingSpectrumSeries(label, sv, mode, top)
	if err != nil {
		return Series{}, 0, fmt.Errorf("%s: %w", e, err)
	}
	if labels != "" {
		s.Key = name
	}
	return s, sp.Skipped, nil
}

// TuneCurves are the best-so-far validation scores of a tune directory's
// summary against the trial number (1-based), one curve per method with
// a finished trial, in percent for a fraction objective; names are all
// the methods (for their styles), ylabel the axis label.
func TuneCurves(sum *tune.Summary) (series []Series, names []string, ylabel string) {
	scale, unit := 1.0, ""
	if reports.IsPercentMetric(sum.Objective) {
		scale, unit = 100, " (%)"
	}
	for _, m := range sum.Methods {
		names = append(names, m.Name)
		s := Series{Label: m.Name}
		for i, v := range tune.BestSoFar(m.Trials, sum.LowerIsBetter) {
			if !math.IsNaN(v) {
				s.X = append(s.X, float64(m.Trials[i].Index+1))
				s.Y = append(s.Y, scale*v)
			}
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	return series, names, "best-so-far validation " + sum.Objective + unit
}

// SpectrumInputs are plot spectrum's embedding files: their labels (one
// for all or one per file), legend names (one per file or none), and
// whether the spectra are class-averaged, with the normalisation and the
// number of values drawn.
type SpectrumInputs struct {
	Embs, Labels, Names []string
	Runs                int // run paths given beside the files
	PerClass            bool
	Normalize           string
	Top                 int
}

// Check refuses inputs that do not pair up (usage errors).
func (s SpectrumInputs) Check() error {
	switch {
	case s.Runs == 0 && len(s.Embs) == 0:
		return usage.Errorf("spectrum needs run directories and/or --emb files")
	case len(s.Labels) > 1 && len(s.Labels) != len(s.Embs):
		return usage.Errorf("give one --labels for all --emb files or one per --emb (%d vs %d)", len(s.Labels), len(s.Embs))
	case len(s.Names) > 0 && len(s.Names) != len(s.Embs):
		return usage.Errorf("give one --name per --emb file (%d vs %d)", len(s.Names), len(s.Embs))
	case s.PerClass && len(s.Labels) == 0:
		return usage.Errorf("--per-class needs --labels")
	case !ValidSpectrumNorm(s.Normalize):
		return usage.Errorf("--normalize must be sum, max or none (got %q)%s", s.Normalize, suggest.Hint(s.Normalize, []string{"sum", "max", "none"}))
	case s.Top < 0:
		return usage.Errorf("--top must be ≥ 0")
	}
	return nil
}

// CheckSpectra refuses the spectra command's settings that cannot run
// (usage errors): no embedding file, an unknown output format or
// normalisation, ρ@m with m < 1, a negative number of values drawn.
func CheckSpectra(emb, format, normalize string, m, top int) error {
	switch {
	case emb == "":
		return usage.Errorf("spectra needs --emb FILE")
	case format != "text" && format != "json":
		return usage.Errorf("--format must be text or json (got %q)%s", format, suggest.Hint(format, []string{"text", "json"}))
	case !ValidSpectrumNorm(normalize):
		return usage.Errorf("--normalize must be sum, max or none (got %q)%s", normalize, suggest.Hint(normalize, []string{"sum", "max", "none"}))
	case m < 1:
		return usage.Errorf("--m must be ≥ 1 (got %d)", m)
	case top < 0:
		return usage.Errorf("--top must be ≥ 0")
	}
	return nil
}
