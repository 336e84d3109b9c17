package plots

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/reports"
)

// NormalizeSpectrum returns the singular values sorted in decreasing order
// and scaled: "sum" divides by Σs (the ŝ = s/Σs of ρ, Roth et al. 2020 §5),
// "max" by the largest value, "none" keeps them.
func NormalizeSpectrum(s []float64, mode string) ([]float64, error) {
	if len(s) == 0 {
		return nil, errors.New("reports: empty spectrum")
	}
	out := append([]float64(nil), s...)
	for _, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("reports: singular value %v is not a finite non-negative number", v)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(out)))
	var d float64
	switch mode {
	case "sum", "":
		for _, v := range out {
			d += v
		}
	case "max":
		d = out[0]
	case "none":
		return out, nil
	default:
		return nil, fmt.Errorf("reports: spectrum normalisation %q: want sum, max or none", mode)
	}
	if d == 0 {
		return nil, errors.New("reports: all singular values are zero")
	}
	for i := range out {
		out[i] /= d
	}
	return out, nil
}

// AverageSpectra normalises each spectrum (NormalizeSpectrum) and averages
// them index by index; shorter spectra are padded with zeros, since a
// matrix of rank r has zero singular values beyond r. This is the
// class-averaged spectrum of Roth et al. 2020 §E / Fig. 11 when ss holds one
// spectrum per class. It also returns the standard deviation per index.
func AverageSpectra(ss [][]float64, mode string) (mean, std []float64, err error) {
	if len(ss) == 0 {
		return nil, nil, errors.New("reports: no spectra to average")
	}
	norm := make([][]float64, len(ss))
	n := 0
	for i, s := range ss {
		if norm[i], err = NormalizeSpectrum(s, mode); err != nil {
			return nil, nil, err
		}
		n = max(n, len(norm[i]))
	}
	mean = make([]float64, n)
	std = make([]float64, n)
	col := make([]float64, len(ss))
	for j := range n {
		for i, s := range norm {
			col[i] = 0
			if j < len(s) {
				col[i] = s[j]
			}
		}
		mean[j] = reports.Mean(col)
		std[j] = math.Sqrt(reports.Variance(col))
	}
	return mean, std, nil
}

// SpectrumSeries is a spectrum as a curve over indices 1…k (top > 0 keeps
// the first top values, as Roth et al. 2020 Fig. 11 shows the first 35).
func SpectrumSeries(label string, values, std []float64, top int) Series {
	k := len(values)
	if top > 0 && top < k {
		k = top
	}
	s := Series{Label: label, X: make([]float64, k), Y: append([]float64(nil), values[:k]...)}
	if std != nil {
		s.YErr = append([]float64(nil), std[:k]...)
	}
	for i := range k {
		s.X[i] = float64(i + 1)
	}
	return s
}

// RunSpectra returns one series per group: the mean of the seeds'
// normalised spectra (record.Run.Spectrum) with their standard deviation.
// Runs without a spectrum are skipped; groups without any are left out.
func RunSpectra(runs []reports.LoadedRun, groupBy []string, mode string, top int) ([]Series, error) {
	var out []Series
	for _, g := range reports.GroupRuns(runs, groupBy) {
		var ss [][]float64
		for _, r := range g.Runs {
			if len(r.Spectrum) > 0 {
				ss = append(ss, r.Spectrum)
			}
		}
		if len(ss) == 0 {
			continue
		}
		m, sd, err := AverageSpectra(ss, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Label, err)
		}
		if len(ss) < 2 {
			sd = nil
		}
		s := SpectrumSeries(g.Label, m, sd, top)
		s.N = make([]int, len(s.X))
		for i := range s.N {
			s.N[i] = len(ss)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("reports: no run has a spectrum (run.json \"spectrum\")")
	}
	return out, nil
}

// value reads metric m of a run (×100 for fraction metrics unless raw).
func value(r reports.LoadedRun, m, source string, raw bool) (float64, bool) {
	v, ok := reports.MetricsOf(r, source)[m]
	if !ok || math.IsNaN(v) {
		return 0, false
	}
	// ±Inf stays: a figure names such points instead of dropping them.
	if !raw && reports.IsPercentMetric(m) {
		v *= 100
	}
	return v, true
}

// RhoFunc computes ρ from singular values (spectra.Rho with m = 1).
type RhoFunc func(s []float64) (float64, error)

// RhoPoints returns, per group, one point (mean ρ, mean metric) with the
// standard deviations as error bars — Roth et al. 2020 Fig. 10. ρ is the run's
// "rho" metric or, if absent, rho(run.Spectrum) when rho is non-nil.
func RhoPoints(runs []reports.LoadedRun, groupBy []string, metric, source string, raw bool, rho RhoFunc) ([]Series, error) {
	var out []Series
	for _, g := range reports.GroupRuns(runs, groupBy) {
		var xs, ys []float64
		for _, r := range g.Runs {
			y, ok := value(r, metric, source, raw)
			if !ok {
				continue
			}
			x, ok := value(r, "rho", source, raw)
			if !ok && rho != nil && len(r.Spectrum) > 0 {
				v, err := rho(r.Spectrum)
				if err != nil {
					return nil, fmt.Errorf("%s: ρ from spectrum: %w", r.Path, err)
				}
				x, ok = v, true
			}
			if !ok {
				continue
			}
			xs, ys = append(xs, x), append(ys, y)
		}
		if len(xs) == 0 {
			continue
		}
		sx, sy := reports.Summarize(xs), reports.Summarize(ys)
		s := Series{Label: g.Label, X: []float64{sx.Mean}, Y: []float64{sy.Mean}, N: []int{len(xs)}}
		if len(xs) > 1 {
			s.XErr, s.YErr = []float64{sx.Std}, []float64{sy.Std}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("reports: no run has both ρ (metric \"rho\" or a spectrum) and %s", metric)
	}
	return out, nil
}

var recallKey = regexp.MustCompile(`^R@(\d+)$`)

// RecallSeries returns R@k against k per group (mean ± std over runs).
func RecallSeries(runs []reports.LoadedRun, groupBy []string, source string, raw bool) ([]Series, error) {
	var out []Series
	for _, g := range reports.GroupRuns(runs, groupBy) {
		vals := map[int][]float64{}
		for _, r := range g.Runs {
			for k := range reports.MetricsOf(r, source) {
				m := recallKey.FindStringSubmatch(k)
				if m == nil {
					continue
				}
				kk, err := strconv.Atoi(m[1])
				if err != nil || kk <= 0 {
					continue
				}
				if v, ok := value(r, k, source, raw); ok {
					vals[kk] = append(vals[kk], v)
				}
			}
		}
		if s, ok := seriesFromMap(g.Label, vals); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("reports: no run has R@k metrics")
	}
	return out, nil
}

func seriesFromMap(label string, vals map[int][]float64) (Series, bool) {
	if len(vals) == 0 {
		return Series{}, false
	}
	keys := make([]int, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	s := Series{Label: label}
	multi := false
	for _, k := range keys {
		sm := reports.Summarize(vals[k])
		s.X = append(s.X, float64(k))
		s.Y = append(s.Y, sm.Mean)
		s.YErr = append(s.YErr, sm.Std)
		s.N = append(s.N, sm.N)
		if sm.N > 1 {
			multi = true
		}
	}
	if !multi {
		s.YErr = nil
	}
	return s, true
}

// CurveSeries returns the training curves per group: the mean training
// loss per epoch and the mean test metric per epoch over the runs
// (record.Run.History), with standard deviations across runs.
func CurveSeries(runs []reports.LoadedRun, groupBy []string, metric string, raw bool) (loss, met []Series, err error) {
	for _, g := range reports.GroupRuns(runs, groupBy) {
		lv, mv := map[int][]float64{}, map[int][]float64{}
		for _, r := range g.Runs {
			for _, e := range r.History {
				if !math.IsNaN(e.Loss) && !math.IsInf(e.Loss, 0) {
					lv[e.Epoch] = append(lv[e.Epoch], e.Loss)
				}
				if v, ok := e.Metrics[metric]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					if !raw && reports.IsPercentMetric(metric) {
						v *= 100
					}
					mv[e.Epoch] = append(mv[e.Epoch], v)
				}
			}
		}
		if s, ok := seriesFromMap(g.Label, lv); ok {
			loss = append(loss, s)
		}
		if s, ok := seriesFromMap(g.Label, mv); ok {
			met = append(met, s)
		}
	}
	if len(loss) == 0 && len(met) == 0 {
		return nil, nil, errors.New("reports: no run has a training history")
	}
	return loss, met, nil
}

// ParamValue reads a numeric hyper-parameter of a run: Method[name] or,
// failing that, the top-level key of the run's config (names compare
// ignoring case, '-' and '_', so embed_dim matches "embed-dim").
func ParamValue(r reports.LoadedRun, name string) (float64, bool) {
	for k, v := range r.Method {
		if reports.SameKey(k, name) {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	if len(r.Config) == 0 {
		return 0, false
	}
	var cfg map[string]any
	if json.Unmarshal(r.Config, &cfg) != nil {
		return 0, false
	}
	for k, v := range cfg {
		if !reports.SameKey(k, name) {
			continue
		}
		switch x := v.(type) {
		case float64:
			return x, true
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// SweepSeries returns metric against a numeric parameter (embedding
// dimension, batch size; Fehérvári et al. 2019 Fig. 1–2), one curve per group of the
// remaining groupBy keys, mean ± std over seeds at each parameter value.
func SweepSeries(runs []reports.LoadedRun, groupBy []string, param, metric, source string, raw bool) ([]Series, error) {
	if len(groupBy) == 0 && len(runs) > 0 {
		groupBy, _ = reports.VaryingKeys(runs)
	}
	groupBy = append([]string{}, reports.Without(groupBy, param)...)
	var out []Series
	missing := 0
	for _, g := range reports.GroupRuns(runs, groupBy) {
		vals := map[float64][]float64{}
		for _, r := range g.Runs {
			x, ok := ParamValue(r, param)
			if !ok {
				missing++
				continue
			}
			if y, ok := value(r, metric, source, raw); ok {
				vals[x] = append(vals[x], y)
			}
		}
		if len(vals) == 0 {
			continue
		}
		xs := make([]float64, 0, len(vals))
		for x := range vals {
			xs = append(xs, x)
		}
		sort.Float64s(xs)
		s := Series{Label: g.Label}
		multi := false
		for _, x := range xs {
			sm := reports.Summarize(vals[x])
			s.X, s.Y, s.YErr, s.N = append(s.X, x), append(s.Y, sm.Mean), append(s.YErr, sm.Std), append(s.N, sm.N)
			multi = multi || sm.N > 1
		}
		if !multi {
			s.YErr = nil
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("reports: no run has both parameter %q (in method or config) and metric %s (%d runs lack the parameter)", param, metric, missing)
	}
	return out, nil
}
