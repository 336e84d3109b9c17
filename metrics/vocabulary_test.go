package metrics

import (
	"slices"
	"strings"
	"testing"
)

// TestAnyK: P@k and mAP@k at any k on lineSet's hand-worked lists
// (metrics_test.go), and mAP@k at k = gallery equal to mAP@1000 (N ≤ 1000:
// both read the whole ranking).
func TestAnyK(t *testing.T) {
	// Hit patterns q0..q4 (q5 lone, left out): 10010 10010 10000 10000 00110,
	// R_q = 2 2 1 1 2.
	// P@1 = (1+1+1+1+0)/5; P@2 = (½+½+½+½+0)/5; P@4 = (2+2+1+1+2)/4/5.
	// mAP@1: strict divides by min(R_q, 1) = 1: (1+1+1+1+0)/5; pml by R_q:
	// (½+½+1+1+0)/5. mAP@4: q0, q1 (1/1 + 2/4)/2; q2, q3 1; q4 (1/3 +
	// 2/4)/2, the same under both (R_q ≤ 4).
	q4 := (1.0/3 + 2.0/4) / 2
	map4 := (0.75 + 0.75 + 1 + 1 + q4) / 5
	for _, tc := range []struct {
		conv Convention
		want map[string]float64
	}{
		{Strict, map[string]float64{"P@1": 0.8, "P@2": 0.4, "P@4": 0.4, "mAP@1": 0.8, "mAP@4": map4}},
		{PML, map[string]float64{"P@1": 0.8, "P@2": 0.4, "P@4": 0.4, "mAP@1": 0.6, "mAP@4": map4}},
	} {
		r := eval(t, lineSet, Options{Metrics: []string{"p@4", "P@1", "P@2", "mAP@1", "map@4"}, Convention: tc.conv})
		expect(t, r, tc.want)
		if got := strings.Join(Keys(r.Metrics), " "); got != "mAP@1 mAP@4 P@1 P@2 P@4" {
			t.Errorf("%s: keys %q", tc.conv, got)
		}
		r = eval(t, lineSet, Options{Metrics: []string{"mAP@5", "mAP@1000"}, Convention: tc.conv})
		if r.Metrics["mAP@5"] != r.Metrics["mAP@1000"] {
			t.Errorf("%s: mAP@5 = %v, mAP@1000 = %v over a gallery of 5", tc.conv, r.Metrics["mAP@5"], r.Metrics["mAP@1000"])
		}
	}
	for _, tc := range []struct {
		names []string
		conv  Convention
		err   string
	}{
		{[]string{"mAP@100"}, Roth, "mAP@1000 only"},
		{[]string{"P@k"}, Strict, "P@10"},
		{[]string{"P@0"}, Strict, "positive integer k"},
		{[]string{"mAP@x"}, Strict, "positive integer k"},
		{[]string{"loss"}, Strict, "does not compute"},
	} {
		if _, err := evalErr(lineSet, Options{Metrics: tc.names, Convention: tc.conv}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v under %s: %v, want an error with %q", tc.names, tc.conv, err, tc.err)
		}
	}
}

// TestPMLNames: pytorch-metric-learning's AccuracyCalculator names (v2.8.1,
// utils/accuracy_calculator.py: calculate_precision_at_1, _r_precision,
// _mean_average_precision_at_r, _mean_reciprocal_rank,
// _mean_average_precision, _NMI, _AMI) ask for the same numbers as
// dmlbench's keys.
func TestPMLNames(t *testing.T) {
	pml := []string{"precision_at_1", "r_precision", "mean_average_precision_at_r", "mean_reciprocal_rank", "mean_average_precision", "NMI", "AMI"}
	keys := []string{"R@1", "R-Precision", "MAP@R", "MRR", "mean_average_precision", "NMI", "AMI"}
	for i, n := range pml {
		if k, ok := Canonical(n); !ok || k != keys[i] {
			t.Errorf("Canonical(%q) = %q, %v; want %q", n, k, ok, keys[i])
		}
	}
	a := eval(t, lineSet, Options{Metrics: pml, Convention: PML})
	b := eval(t, lineSet, Options{Metrics: keys, Convention: PML})
	got := Keys(a.Metrics)
	if want := Keys(b.Metrics); !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	for _, k := range got {
		if a.Metrics[k] != b.Metrics[k] {
			t.Errorf("%s: %v by pml's name, %v by key", k, a.Metrics[k], b.Metrics[k])
		}
	}
	// precision_at_1 drops the lone q5 under pml: 4 of 5 queries.
	expect(t, a, map[string]float64{"R@1": 0.8})
}

// TestReportColumns: the default columns of report are Roth et al. 2020's
// Tab. 4–6 columns, in order, taken from the descriptors.
func TestReportColumns(t *testing.T) {
	if got := strings.Join(ReportColumns(), " "); got != "R@1 R@2 F1 mAP@C mAP@1000 NMI" {
		t.Errorf("report columns %q", got)
	}
	if d, _ := Lookup("mAP@C"); d.SameAs != "MAP@R" {
		t.Errorf("mAP@C folds into %q", d.SameAs)
	}
	if got := strings.Join(Keys(map[string]float64{"P@10": 0, "P@5": 0, "mAP@100": 0, "mAP@1000": 0, "R@2": 0, "R@10": 0, "MAP@R": 0, "loss": 0}), " "); got != "R@2 R@10 mAP@1000 mAP@100 MAP@R P@5 P@10 loss" {
		t.Errorf("Keys order %q", got)
	}
}

// TestProtocols: the standard splits' ks and sizes, and the warning when
// the files differ from the split.
func TestProtocols(t *testing.T) {
	if got := strings.Join(ProtocolNames(), " "); got != "cars cub inshop sop" {
		t.Errorf("protocols %q", got)
	}
	p, ok := LookupProtocol("sop")
	if !ok || !slices.Equal(p.Ks, []int{1, 10, 100, 1000}) || p.Warning(&Result{N: 60502}) != "" {
		t.Errorf("sop: %+v", p)
	}
	if w := p.Warning(&Result{N: 100}); !strings.Contains(w, "100 items, but the Stanford Online Products test split has 60502") {
		t.Errorf("sop warning %q", w)
	}
	p, _ = LookupProtocol("inshop")
	if w := p.Warning(&Result{Queries: 14218, Gallery: 12612}); w != "" || p.Warning(&Result{Queries: 1, Gallery: 12612}) == "" {
		t.Errorf("inshop warnings %q", w)
	}
}
