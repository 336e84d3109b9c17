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
