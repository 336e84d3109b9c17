package reports

import (
	"math"
	"testing"
)

// Holm and Benjamini–Hochberg against hand computations.
//
// p = (0.01, 0.04, 0.03, 0.005), m = 4, sorted 0.005, 0.01, 0.03, 0.04:
// Holm: 4·0.005 = 0.02; max(0.02, 3·0.01 = 0.03) = 0.03;
// max(0.03, 2·0.03 = 0.06) = 0.06; max(0.06, 1·0.04) = 0.06.
// BH from the largest: 4·0.04/4 = 0.04; min(0.04, 4·0.03/3 = 0.04) = 0.04;
// min(0.04, 4·0.01/2 = 0.02) = 0.02; min(0.02, 4·0.005/1 = 0.02) = 0.02.
func TestHolmAndBHByHand(t *testing.T) {
	ps := []float64{0.01, 0.04, 0.03, 0.005}
	check := func(name string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12) {
				t.Errorf("%s[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	check("holm", Holm(ps), []float64{0.03, 0.06, 0.06, 0.02})
	check("bh", BenjaminiHochberg(ps), []float64{0.02, 0.04, 0.04, 0.02})
	// Capped at 1; NaN is no test and leaves the family (m = 2 here):
	// Holm 2·0.3 = 0.6, max(0.6, 0.9) = 0.9; BH 2·0.9/2 = 0.9, min(0.9, 2·0.3) = 0.6.
	nan := math.NaN()
	check("holm-nan", Holm([]float64{0.9, nan, 0.3}), []float64{0.9, nan, 0.6})
	check("bh-nan", BenjaminiHochberg([]float64{0.9, nan, 0.3}), []float64{0.9, nan, 0.6})
	check("holm-cap", Holm([]float64{0.6, 0.7}), []float64{1, 1})
	// Ties: p = (0.02, 0.02, 0.02): Holm 3·0.02 = 0.06 for all (running max);
	// BH 3·0.02/3 = 0.02 for all.
	check("holm-ties", Holm([]float64{0.02, 0.02, 0.02}), []float64{0.06, 0.06, 0.06})
	check("bh-ties", BenjaminiHochberg([]float64{0.02, 0.02, 0.02}), []float64{0.02, 0.02, 0.02})
	check("none", Adjust(ps, CorrectionNone), ps)
}

// The † of a table follows the adjusted p: three tests with raw p 0.01,
// 0.02 and 0.04 are all significant uncorrected; Holm gives 0.03, 0.04,
// 0.04 (3·0.01; max(0.03, 2·0.02); max(0.04, 0.04)), all < 0.05; with a
// fourth test p = 0.5 Holm gives 0.04, 0.06, 0.08, 0.5 and only the first
// stays significant.
func TestAdjustTableHolm(t *testing.T) {
	mk := func(ps ...float64) *Table {
		tb := &Table{Metrics: []string{"R@1"}}
		for _, p := range ps {
			tb.Rows = append(tb.Rows, &Row{Delta: map[string]*Comparison{"R@1": {TTest: TTest{P: p}}}})
		}
		return tb
	}
	opt := Options{Alpha: 0.05, Correction: CorrectionHolm}
	tb := mk(0.01, 0.02, 0.04)
	adjustTable(tb, opt)
	for i, want := range []float64{0.03, 0.04, 0.04} {
		if c := tb.Rows[i].Delta["R@1"]; math.Abs(c.PAdj-want) > 1e-12 || !c.Significant {
			t.Errorf("row %d: p_adj %v significant %v, want %v true", i, c.PAdj, c.Significant, want)
		}
	}
	tb = mk(0.01, 0.02, 0.04, 0.5)
	adjustTable(tb, opt)
	for i, want := range []float64{0.04, 0.06, 0.08, 0.5} {
		if c := tb.Rows[i].Delta["R@1"]; math.Abs(c.PAdj-want) > 1e-12 || c.Significant != (i == 0) {
			t.Errorf("row %d: p_adj %v significant %v, want %v %v", i, c.PAdj, c.Significant, want, i == 0)
		}
	}
	if tb.Family() != 4 {
		t.Errorf("family %d, want 4", tb.Family())
	}
}

// Near-best: the runner-up within noise of the best is marked, a row far
// below is not, a row of one run (no test) is not. Best 39.30 (s = 1.22,
// n = 3) against 39.15 (s = 1.06, n = 3): Welch p ≈ 0.88 ≥ 0.05, marked;
// 30 ± 0.1 against it: p < 0.01, not marked.
func TestNearBest(t *testing.T) {
	row := func(xs ...float64) *Row {
		return &Row{Cells: map[string]Summary{"R@1": Summarize(xs)}, Best: map[string]bool{}}
	}
	tb := &Table{Metrics: []string{"R@1"}, Rows: []*Row{
		row(39.30-1.22, 39.30, 39.30+1.22), row(39.15-1.06, 39.15, 39.15+1.06), row(29.9, 30, 30.1), row(39.2)}}
	markBest(tb, Options{Alpha: 0.05})
	if !tb.Rows[0].Best["R@1"] || !tb.Rows[1].NearBest["R@1"] || tb.Rows[2].NearBest["R@1"] || tb.Rows[3].NearBest["R@1"] {
		t.Errorf("best %v, near-best %v %v %v", tb.Rows[0].Best, tb.Rows[1].NearBest, tb.Rows[2].NearBest, tb.Rows[3].NearBest)
	}
}
