package reports

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
)

// CanonicalMethodKeys orders the well-known record.Run.Method keys; other
// keys follow alphabetically.
var CanonicalMethodKeys = []string{"loss", "miner", "sampler", "regularizer", "embed_dim", "batch_size"}

// Options configure Aggregate.
type Options struct {
	// GroupBy lists record.Run.Method keys whose values form the group
	// (row) key. Empty: per table, the Method keys whose values differ
	// between the table's runs (keys shared by all runs are listed in
	// Table.Common instead). Runs are always also grouped by dataset (one
	// table per dataset).
	GroupBy []string
	// Metrics are the metric keys (columns); empty: the descriptors'
	// report columns (metrics.ReportColumns: Roth et al. 2020 Tab. 4–6).
	Metrics []string
	// Source selects which metrics of a run are read: "final" (default;
	// falls back to the last history epoch with metrics) or "best".
	Source string
	// Raw disables the ×100 scaling of fraction-valued metrics (R@k, NMI,
	// F1, mAP…); by default they are shown in percent like the papers.
	Raw bool
	// Baseline names a row label (see Row.Label); when set, every other
	// row of the same table gets Δ, Welch's t-test and (with CI) a
	// bootstrap interval of the difference.
	Baseline string
	// Alpha is the significance level of the † mark (default 0.05).
	Alpha float64
	// Correction adjusts the p-values of a table's tests against the
	// baseline for multiple comparisons: CorrectionHolm (default),
	// CorrectionBH or CorrectionNone.
	Correction string
	// Decimals, if set, is the number of decimals of every metric
	// (default: 2 for percentages, 4 otherwise).
	Decimals *int
	// CI is the confidence level of the intervals (e.g. 0.95); 0 disables
	// them. Cells (and differences) with fewer than two values get none.
	CI float64
	// CIMethod chooses the interval: CIAuto (default) a Student t-interval
	// below BootstrapMinN values and a percentile bootstrap from there on,
	// CIT always the t-interval, CIBootstrap the bootstrap (refused for a
	// cell with fewer than BootstrapMinN values).
	CIMethod string
	// Bootstrap is the number of bootstrap resamples (default 10000).
	Bootstrap int
	// Seed seeds the bootstrap (PCG, stream Seed).
	Seed uint64
	// References are published rows shown under the measured ones.
	References []ReferenceRow
	// ReferenceDataset, if set, selects the published dataset to show under
	// every table; otherwise published rows are matched to each table by
	// dataset name (see SameDataset).
	ReferenceDataset string
	// ReferenceApproaches keeps only the published rows it names: an entry
	// equal to a published approach (case-insensitive) keeps that row, any
	// other entry keeps every approach containing it; empty keeps all.
	ReferenceApproaches []string
}

// Report is a set of tables, one per dataset.
type Report struct {
	Tables []*Table
	Opt    Options
	// Notes are warnings about the input (skipped runs, duplicate seeds,
	// missing metrics).
	Notes []string
	// CITUsed and CIBootstrapUsed say which interval some cell got.
	CITUsed, CIBootstrapUsed bool
}

// Table is one dataset's comparison.
type Table struct {
	Dataset string
	Metrics []string
	GroupBy []string
	// Common holds the Method keys left out of an automatic group key
	// because every run of the table has the same value.
	Common map[string]string
	Rows   []*Row
	// BaselineRow indexes Rows (−1 without a baseline).
	BaselineRow int
	References  []ReferenceRow
}

// Row is one method: the runs that share the group key.
type Row struct {
	// Label is the group-by values joined by "/" (e.g. "margin/distance"),
	// or the display name Rename gave it.
	Label string
	// Key is the group-by label when Rename changed Label ("" before).
	Key    string
	Method map[string]string
	N      int
	Seeds  []int64
	Paths  []string
	Cells  map[string]Summary
	// Delta holds the comparison with the baseline row (nil for the
	// baseline itself and without a baseline).
	Delta map[string]*Comparison
	// Best marks the columns in which this row is (tied) best.
	Best map[string]bool
	// NearBest marks the columns in which this row is not best but not
	// significantly different from the best row either (Welch two-sided
	// t-test, p ≥ α).
	NearBest map[string]bool
}

// Comparison is one cell's difference to the baseline.
type Comparison struct {
	TTest
	// Err says why no test was possible ("" when T and P are valid).
	Err string
	// PAdj is P adjusted for the table's tests (Options.Correction).
	PAdj        float64
	Significant bool
	// CILo, CIHi bound the CI of the difference (NaN if none): Welch's
	// t-interval, or with Bootstrap the percentile bootstrap.
	CILo, CIHi float64
	Bootstrap  bool
}

// MetricsOf returns the metric map a report reads from a run.
func MetricsOf(r LoadedRun, source string) map[string]float64 {
	switch source {
	case "best":
		return r.Best
	case "initial":
		return r.Initial
	}
	if len(r.Final) > 0 {
		return r.Final
	}
	for i := len(r.History) - 1; i >= 0; i-- {
		if len(r.History[i].Metrics) > 0 {
			return r.History[i].Metrics
		}
	}
	return nil
}

// MethodKeys returns the Method keys present in runs in canonical order.
func MethodKeys(runs []LoadedRun) []string {
	set := map[string]bool{}
	for _, r := range runs {
		for k := range r.Method {
			set[k] = true
		}
	}
	var keys []string
	for _, k := range CanonicalMethodKeys {
		if set[k] {
			keys = append(keys, k)
			delete(set, k)
		}
	}
	var rest []string
	for k := range set {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

// VaryingKeys splits the Method keys of runs (canonical order) into those
// whose values differ between runs and those shared by all runs (with
// their value). A key missing from some runs counts as varying. With no
// varying key at all, "loss" (or the first key) is kept so rows have a
// name.
func VaryingKeys(runs []LoadedRun) (varying []string, common map[string]string) {
	common = map[string]string{}
	all := MethodKeys(runs)
	for _, k := range all {
		v0, ok0 := runs[0].Method[k]
		same := ok0
		for _, r := range runs[1:] {
			if v, ok := r.Method[k]; !ok || v != v0 {
				same = false
				break
			}
		}
		if same {
			common[k] = v0
		} else {
			varying = append(varying, k)
		}
	}
	if len(varying) == 0 && len(all) > 0 {
		k := all[0]
		varying = []string{k}
		delete(common, k)
	}
	return varying, common
}

// GroupLabel joins the values of keys in method with "/" ("-" for a
// missing key).
func GroupLabel(method map[string]string, keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, ok := method[k]
		if !ok || v == "" {
			v = "-"
		}
		parts[i] = v
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, "/")
}

// Aggregate groups runs by dataset and method and summarises every metric:
// one table per dataset (sorted), one row per group, one cell per metric
// (mean ± sd, bootstrap CI when asked), the best cell per column marked,
// and the Δ columns against the baseline row.
func Aggregate(runs []LoadedRun, opt Options) (*Report, error) {
	if len(runs) == 0 {
		return nil, errors.New("reports: no finished runs to aggregate")
	}
	opt, err := withDefaults(opt)
	if err != nil {
		return nil, err
	}
	a := &aggregation{opt: opt, autoGroup: len(opt.GroupBy) == 0, seenMetric: map[string]bool{}}
	if a.autoGroup {
		a.opt.GroupBy = MethodKeys(runs)
	} else if err := checkGroupBy(runs, opt.GroupBy); err != nil {
		return nil, err
	}
	a.rep = &Report{Opt: a.opt}
	if a.opt.CI > 0 {
		a.rng = rand.New(rand.NewPCG(a.opt.Seed, 0x646d6c62656e6368)) // "dmlbench"
	}
	datasets, byDataset := splitByDataset(runs)
	a.baselineFound = a.opt.Baseline == ""
	for _, ds := range datasets {
		t, err := a.table(ds, byDataset[ds])
		if err != nil {
			return nil, err
		}
		a.rep.Tables = append(a.rep.Tables, t)
	}
	if !a.baselineFound {
		return nil, a.baselineMissing()
	}
	for _, m := range a.opt.Metrics {
		if !a.seenMetric[m] {
			a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("metric %q is in no run's %s metrics", m, a.opt.Source))
		}
	}
	return a.rep, nil
}

// withDefaults checks opt's levels, resample count and metric source and
// fills in their defaults (α = 0.05, 10000 resamples, final metrics, the
// Roth et al. 2020 columns).
func withDefaults(opt Options) (Options, error) {
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	if !(opt.Alpha > 0 && opt.Alpha < 1) {
		return opt, fmt.Errorf("reports: significance level %v must lie in (0, 1)", opt.Alpha)
	}
	if opt.CI != 0 && !(opt.CI > 0 && opt.CI < 1) {
		return opt, fmt.Errorf("reports: confidence level %v must lie in (0, 1)", opt.CI)
	}
	if opt.Bootstrap == 0 {
		opt.Bootstrap = 10000
	}
	var err error
	if opt.Correction, err = ParseCorrection(opt.Correction); err != nil {
		return opt, err
	}
	if opt.Decimals != nil && (*opt.Decimals < 0 || *opt.Decimals > 10) {
		return opt, fmt.Errorf("reports: %d decimals: want 0 to 10", *opt.Decimals)
	}
	switch opt.CIMethod {
	case "":
		opt.CIMethod = CIAuto
	case CIAuto, CIT, CIBootstrap:
	default:
		return opt, usage.Errorf("reports: interval method %q: want %s, %s or %s%s", opt.CIMethod, CIAuto, CIT, CIBootstrap, suggest.Hint(opt.CIMethod, []string{CIAuto, CIT, CIBootstrap}))
	}
	if opt.Bootstrap < 0 {
		return opt, fmt.Errorf("reports: bootstrap resamples %d must be positive", opt.Bootstrap)
	}
	switch opt.Source {
	case "":
		opt.Source = "final"
	case "final", "best", "initial":
	default:
		return opt, fmt.Errorf("reports: metric source %q: want final, best or initial", opt.Source)
	}
	if len(opt.Metrics) == 0 {
		opt.Metrics = metrics.ReportColumns()
	}
	return opt, nil
}

// splitByDataset returns the runs' datasets, sorted, and each one's runs in
// input order.
func splitByDataset(runs []LoadedRun) ([]string, map[string][]LoadedRun) {
	byDataset := map[string][]LoadedRun{}
	for _, r := range runs {
		byDataset[r.Dataset] = append(byDataset[r.Dataset], r)
	}
	datasets := make([]string, 0, len(byDataset))
	for d := range byDataset {
		datasets = append(datasets, d)
	}
	sort.Strings(datasets)
	return datasets, byDataset
}

// aggregation is one Aggregate call's state across its tables. rng, when
// CIs are asked for, is shared by every table in dataset order, so the
// intervals depend on the seed and the runs only.
type aggregation struct {
	opt           Options
	autoGroup     bool
	rng           *rand.Rand
	rep           *Report
	seenMetric    map[string]bool // metrics some run has a value for
	baselineFound bool
}

// table builds dataset ds's table from its runs: rows, cells, best marks,
// the baseline comparison and the published reference rows; notes go to
// the report.
func (a *aggregation) table(ds string, runs []LoadedRun) (*Table, error) {
	opt := a.opt
	t := &Table{Dataset: ds, Metrics: opt.Metrics, GroupBy: opt.GroupBy, BaselineRow: -1}
	if a.autoGroup {
		t.GroupBy, t.Common = VaryingKeys(runs)
	}
	labels, groups, methods, notes := groupRuns(ds, runs, t.GroupBy)
	a.rep.Notes = append(a.rep.Notes, notes...)
	for _, l := range labels {
		row := &Row{Label: l, Method: methods[l], Cells: map[string]Summary{}, Best: map[string]bool{}}
		for _, r := range groups[l] {
			row.N++
			row.Seeds = append(row.Seeds, r.Seed)
			row.Paths = append(row.Paths, r.Path)
		}
		t.Rows = append(t.Rows, row)
	}
	for _, row := range t.Rows {
		if dup := duplicates(row.Seeds); len(dup) > 0 {
			a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("%s %s: seed(s) %v occur more than once (%s)", ds, row.Label, dup, strings.Join(row.Paths, ", ")))
		}
		for _, m := range opt.Metrics {
			s, err := a.cell(groups[row.Label], m)
			if err != nil {
				return nil, err
			}
			row.Cells[m] = s
		}
	}
	markBest(t, opt)
	if err := a.baseline(t); err != nil {
		return nil, err
	}
	t.References = selectReferences(opt, ds)
	if len(opt.References) > 0 && len(t.References) == 0 {
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("%s: no published rows for this dataset; pass --reference-dataset with one of %s", ds, referenceDatasets(opt.References)))
	}
	return t, nil
}

// cell summarises metric m over one row's runs, in path order (LoadRuns
// sorts paths). A run without a value (missing, or null in run.json) is
// left out of the mean: the cell's N is then below the row's N. An
// infinite value stays in, so the cell reads +Inf rather than a smaller n.
func (a *aggregation) cell(runs []LoadedRun, m string) (Summary, error) {
	opt := a.opt
	var xs []float64
	for _, r := range runs {
		v, ok := MetricsOf(r, opt.Source)[m]
		if !ok || math.IsNaN(v) {
			continue // ±Inf (ρ of a rank-deficient embedding) is kept: the mean shows it
		}
		if !opt.Raw && IsPercentMetric(m) {
			v *= 100
		}
		xs = append(xs, v)
	}
	if len(xs) > 0 {
		a.seenMetric[m] = true
	}
	s := Summarize(xs)
	if a.rng != nil && len(xs) > 1 && allFinite(xs) { // one value has no sampling spread
		boot, err := useBootstrap(opt.CIMethod, len(xs))
		if err != nil {
			return Summary{}, fmt.Errorf("%s: %w", m, err)
		}
		var lo, hi float64
		if boot {
			lo, hi, err = BootstrapMeanCI(xs, opt.CI, opt.Bootstrap, a.rng)
			a.rep.CIBootstrapUsed = true
		} else {
			lo, hi, err = TMeanCI(xs, opt.CI)
			a.rep.CITUsed = true
		}
		if err != nil {
			return Summary{}, err
		}
		s.CILo, s.CIHi = lo, hi
	}
	return s, nil
}

// baseline finds t's --baseline row (the last whose label matches, case
// folded) and compares every row with it; a table without one gets a note.
func (a *aggregation) baseline(t *Table) error {
	if a.opt.Baseline == "" {
		return nil
	}
	for i, row := range t.Rows {
		if strings.EqualFold(row.Label, a.opt.Baseline) {
			t.BaselineRow = i
		}
	}
	if t.BaselineRow < 0 {
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("%s: no row named %q; no Δ column", t.Dataset, a.opt.Baseline))
		return nil
	}
	a.baselineFound = true
	return compare(t, a.opt, a.rng)
}

// baselineMissing is the error for a --baseline that names no row of any
// table; it lists the rows there are.
func (a *aggregation) baselineMissing() error {
	var names []string
	for _, t := range a.rep.Tables {
		for _, r := range t.Rows {
			names = append(names, strconv.Quote(r.Label))
		}
	}
	return fmt.Errorf("reports: baseline %q matches no row; rows are %s", a.opt.Baseline, strings.Join(names, ", "))
}

func duplicates(seeds []int64) []int64 {
	count := map[int64]int{}
	for _, s := range seeds {
		count[s]++
	}
	var d []int64
	for s, c := range count {
		if c > 1 {
			d = append(d, s)
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d
}

// markBest flags, per column, the rows whose mean (rounded as displayed)
// equals the best mean.
func markBest(t *Table, opt Options) {
	for _, m := range t.Metrics {
		best := math.NaN()
		for _, r := range t.Rows {
			v := r.Cells[m].Mean
			if math.IsNaN(v) {
				continue
			}
			if math.IsNaN(best) || (metrics.LowerIsBetter(m) && v < best) || (!metrics.LowerIsBetter(m) && v > best) {
				best = v
			}
		}
		if math.IsNaN(best) || len(t.Rows) < 2 {
			continue
		}
		prec := opt.precision(m)
		bs := strconv.FormatFloat(best, 'f', prec, 64)
		var top *Row
		for _, r := range t.Rows {
			if v := r.Cells[m].Mean; !math.IsNaN(v) && strconv.FormatFloat(v, 'f', prec, 64) == bs {
				r.Best[m] = true
				if top == nil || r.Cells[m].N > top.Cells[m].N {
					top = r
				}
			}
		}
		markNearBest(t, m, top, opt.Alpha)
	}
}

// markNearBest flags the rows that are not best in column m but whose
// values do not differ significantly from the best row's (Welch two-sided
// t-test p ≥ α, uncorrected: a correction would only widen the mark).
// Rows or a best row with fewer than two values, or zero variance, get no
// test and no mark.
func markNearBest(t *Table, m string, top *Row, alpha float64) {
	if top == nil {
		return
	}
	for _, r := range t.Rows {
		if r.Best[m] {
			continue
		}
		a, b := r.Cells[m].Values, top.Cells[m].Values
		if !allFinite(a) || !allFinite(b) {
			continue
		}
		if tt, err := WelchT(a, b); err == nil && tt.P >= alpha {
			if r.NearBest == nil {
				r.NearBest = map[string]bool{}
			}
			r.NearBest[m] = true
		}
	}
}

// precision is the number of decimals metric m is shown with.
func (opt Options) precision(m string) int {
	if opt.Decimals != nil {
		return *opt.Decimals
	}
	return precisionFor(m, opt.Raw)
}

func compare(t *Table, opt Options, rng *rand.Rand) error {
	base := t.Rows[t.BaselineRow]
	for i, r := range t.Rows {
		if i == t.BaselineRow {
			continue
		}
		r.Delta = map[string]*Comparison{}
		for _, m := range t.Metrics {
			a, b := r.Cells[m].Values, base.Cells[m].Values
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			if !allFinite(a) || !allFinite(b) {
				r.Delta[m] = &Comparison{TTest: TTest{Delta: math.NaN(), T: math.NaN(), DF: math.NaN(), P: math.NaN()},
					CILo: math.NaN(), CIHi: math.NaN(), Err: "non-finite"}
				continue
			}
			tt, err := WelchT(a, b)
			c := &Comparison{TTest: tt, CILo: math.NaN(), CIHi: math.NaN()}
			switch {
			case errors.Is(err, ErrTooFewSamples):
				c.Err = "n<2"
			case errors.Is(err, ErrZeroVariance):
				c.Err = "zero variance"
			case err != nil:
				return err
			}
			if rng != nil && len(a) > 1 && len(b) > 1 {
				boot, err := useBootstrap(opt.CIMethod, min(len(a), len(b)))
				if err != nil {
					return fmt.Errorf("%s: %w", m, err)
				}
				var lo, hi float64
				c.Bootstrap = boot
				if boot {
					lo, hi, err = BootstrapDeltaCI(a, b, opt.CI, opt.Bootstrap, rng)
				} else {
					lo, hi, err = WelchDeltaCI(a, b, opt.CI)
				}
				if err != nil && !errors.Is(err, ErrZeroVariance) {
					return err
				}
				c.CILo, c.CIHi = lo, hi
			}
			r.Delta[m] = c
		}
	}
	adjustTable(t, opt)
	return nil
}

// adjustTable adjusts the p-values of t's tests against the baseline for
// their number (Options.Correction) and marks those below α.
func adjustTable(t *Table, opt Options) {
	var cs []*Comparison
	var ps []float64
	for _, r := range t.Rows {
		for _, m := range t.Metrics {
			if c := r.Delta[m]; c != nil && c.Err == "" {
				cs, ps = append(cs, c), append(ps, c.P)
			}
		}
	}
	adj := Adjust(ps, opt.Correction)
	for i, c := range cs {
		c.PAdj = adj[i]
		c.Significant = adj[i] < opt.Alpha
	}
}

// Family is the number of tests against the baseline in t (the family of
// the correction).
func (t *Table) Family() int {
	n := 0
	for _, r := range t.Rows {
		for _, c := range r.Delta {
			if c != nil && c.Err == "" {
				n++
			}
		}
	}
	return n
}

// allFinite reports whether no value is ±Inf (NaN never reaches a cell).
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
	}
	return true
}

// Check checks the settings a user gives: the source of the metrics, the
// significance level, the confidence level (0: none) and the number of
// bootstrap resamples. Its messages name report's flags.
func (opt Options) Check() error {
	switch {
	case opt.Source != "final" && opt.Source != "best" && opt.Source != "initial":
		return fmt.Errorf("--source must be final, best or initial (got %q)%s", opt.Source, suggest.Hint(opt.Source, []string{"final", "best", "initial"}))
	case !(opt.Alpha > 0 && opt.Alpha < 1):
		return fmt.Errorf("--alpha must lie in (0, 1) (got %v)", opt.Alpha)
	case opt.CI != 0 && !(opt.CI > 0 && opt.CI < 1):
		return fmt.Errorf("--ci must lie in (0, 1) or be 0 (got %v)", opt.CI)
	case opt.Bootstrap < 1:
		return fmt.Errorf("--bootstrap must be positive (got %d)", opt.Bootstrap)
	}
	return nil
}
