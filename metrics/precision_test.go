package metrics

import (
	"strings"
	"testing"
)

// P@10 on hand-worked neighbour lists (Manning et al. 2008, §8.4: the
// fraction of same-class items among the 10 nearest neighbours).
func TestPrecisionAt10(t *testing.T) {
	// lineSet (x = 0 1 3 4 10 20, labels 7 7 3 3 7 100): each query's gallery
	// holds 5 items, all read, divided by 10: q0 {1, 10} → 2/10, q1 {0, 10}
	// → 2/10, q2 {4} → 1/10, q3 {3} → 1/10, q4 {1, 0} → 2/10; q5 is lone.
	for _, conv := range []Convention{Strict, PML} {
		r := eval(t, lineSet, Options{Metrics: []string{"P@10"}, Convention: conv})
		expect(t, r, map[string]float64{"P@10": (0.2 + 0.2 + 0.1 + 0.1 + 0.2) / 5})
	}
	// x = 0..11, labels 0×6 then 1×6: each query's 10 nearest leave out only
	// its farthest item, which is of the other class (for x = 5 the
	// farthest is 11, for x = 6 it is 0), so every query sees all 5 others
	// of its class: 5/10.
	x := make([]float32, 12)
	y := make([]int32, 12)
	for i := range x {
		x[i] = float32(i)
		y[i] = int32(i / 6)
	}
	r := eval(t, Input{Emb: col(x...), Labels: y}, Options{Metrics: []string{"precision_at_10"}})
	expect(t, r, map[string]float64{"P@10": 0.5})
	if !IsPercent("P@10") {
		t.Error("P@10 is a fraction shown in percent")
	}
	// Not in any default set; refused under roth.
	if _, ok := eval(t, lineSet, Options{Ks: []int{1}}).Metrics["P@10"]; ok {
		t.Error("P@10 in the default set")
	}
	if _, err := evalErr(lineSet, Options{Metrics: []string{"P@10"}, Convention: Roth}); err == nil || !strings.Contains(err.Error(), "Roth") {
		t.Errorf("P@10 under roth: %v", err)
	}
}
