package metrics

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"testing"
)

// TestAskedMetricsOnly: --metrics R@1,MAP@R gives exactly R@1 and MAP@R
// even when recall ks are passed (the CLI always passes its --k default);
// R-Precision and mAP@C, computed with MAP@R, go to Extra.
func TestAskedMetricsOnly(t *testing.T) {
	for _, tc := range []struct {
		names     []string
		ks        []int
		want      string
		wantExtra string
	}{
		{[]string{"R@1", "MAP@R"}, []int{1, 2, 4, 8}, "MAP@R R@1", "R-Precision mAP@C"},
		{[]string{"R@k", "NMI"}, []int{1, 4}, "NMI R@1 R@4", ""},
		{[]string{"r@2", "map_at_r", "rprecision"}, nil, "MAP@R R-Precision R@2", "mAP@C"},
		{[]string{"R@k"}, []int{5, 1}, "R@1 R@5", ""},
	} {
		r := eval(t, lineSet, Options{Metrics: tc.names, Ks: tc.ks})
		if got := sortedKeys(r.Metrics); got != tc.want {
			t.Errorf("%v ks %v: metrics %q, want %q", tc.names, tc.ks, got, tc.want)
		}
		if got := sortedKeys(r.Extra); got != tc.wantExtra {
			t.Errorf("%v ks %v: extra %q, want %q", tc.names, tc.ks, got, tc.wantExtra)
		}
	}
	// No list: every metric of the convention's default set (strict's
	// leaves out the opt-in MRR and P@10, and pml's mean_average_precision),
	// nothing extra.
	for _, conv := range []Convention{Strict, Roth, PML} {
		r := eval(t, lineSet, Options{Ks: []int{1}, Convention: conv})
		want := 0
		for _, d := range All() {
			if d.inDefaultSet(conv) {
				want++
			}
		}
		if len(r.Extra) != 0 || len(r.Metrics) != want {
			t.Errorf("%s, all metrics: %d metrics (want %d), extra %v", conv, len(r.Metrics), want, r.Extra)
		}
		for _, d := range All() {
			if _, ok := r.Metrics[d.Key]; ok != d.inDefaultSet(conv) && d.Key != "R@k" {
				t.Errorf("%s default set: %s present %v", conv, d.Key, ok)
			}
		}
	}
}

func sortedKeys(m map[string]float64) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return strings.Join(k, " ")
}

// TestDescriptors: every descriptor resolves by key and alias, percent and
// direction come from it, and unknown keys are neither.
func TestDescriptors(t *testing.T) {
	for _, d := range All() {
		for _, n := range append([]string{d.Key, strings.ToLower(d.Key)}, d.Aliases...) {
			got, ok := Lookup(n)
			if !ok || got.Key != d.Key {
				t.Errorf("Lookup(%q) = %q, %v; want %q", n, got.Key, ok, d.Key)
			}
		}
		if d.Definition == "" || d.Source == "" || d.Stage == 0 {
			t.Errorf("%s: definition, source and stage are required", d.Key)
		}
	}
	for key, want := range map[string][2]bool{
		"R@1": {true, false}, "R@1000": {true, false}, "NMI": {true, false}, "MAP@R": {true, false},
		"mAP@R": {true, false}, "rho": {false, true}, "dist_ratio": {false, false}, "loss": {false, true}, "R@x": {false, false},
		"P@5": {true, false}, "mAP@100": {true, false}, "precision_at_1": {true, false}, "rho@3": {false, true}, "ARI": {true, false}, "foo": {false, false},
	} {
		if IsPercent(key) != want[0] || LowerIsBetter(key) != want[1] {
			t.Errorf("%s: percent %v lower-is-better %v, want %v", key, IsPercent(key), LowerIsBetter(key), want)
		}
	}
}

// TestEmptyMeanIsUndefined: when every query is lone (its class has no other
// item), the means over non-lone queries have no term: NaN (null in JSON)
// with a warning, in every convention that leaves lone queries out —
// pytorch-metric-learning returns NaN there. Strict R@k counts lone queries
// as misses, so it stays 0.
func TestEmptyMeanIsUndefined(t *testing.T) {
	in := Input{Emb: col(0, 1, 3, 7), Labels: []int32{1, 2, 3, 4}}
	names := []string{"R@1", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}
	for _, tc := range []struct {
		conv Convention
		nan  string
	}{
		{Strict, "MAP@R R-Precision mAP@1000 mAP@C"},
		{PML, "MAP@R R-Precision R@1 mAP@1000 mAP@C"},
	} {
		r := eval(t, in, Options{Metrics: names, Convention: tc.conv})
		var nan []string
		for k, v := range r.Metrics {
			if math.IsNaN(v) {
				nan = append(nan, k)
			} else if v != 0 {
				t.Errorf("%s %s = %v, want 0 or NaN", tc.conv, k, v)
			}
		}
		sort.Strings(nan)
		if got := strings.Join(nan, " "); got != tc.nan {
			t.Errorf("%s: NaN metrics %q, want %q", tc.conv, got, tc.nan)
		}
		if !strings.Contains(strings.Join(r.Warnings, "\n"), "undefined") {
			t.Errorf("%s: no warning about undefined means: %q", tc.conv, r.Warnings)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%s: %v", tc.conv, err)
		}
		if !strings.Contains(string(b), `"MAP@R":null`) {
			t.Errorf("%s: JSON %s has no null MAP@R", tc.conv, b)
		}
	}
}
