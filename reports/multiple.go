package reports

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Corrections for multiple comparisons that Options.Correction names.
const (
	CorrectionHolm = "holm"
	CorrectionBH   = "bh"
	CorrectionNone = "none"
)

// CorrectionNote is the legend's phrase for correction c.
func CorrectionNote(c string, family int) string {
	switch c {
	case CorrectionHolm:
		return fmt.Sprintf("Holm-adjusted over the %d tests of the table (family-wise error ≤ α)", family)
	case CorrectionBH:
		return fmt.Sprintf("Benjamini–Hochberg-adjusted over the %d tests of the table (false discovery rate ≤ α)", family)
	}
	return "uncorrected"
}

// ParseCorrection checks a correction name ("" is CorrectionHolm).
func ParseCorrection(s string) (string, error) {
	switch strings.ToLower(s) {
	case "", CorrectionHolm:
		return CorrectionHolm, nil
	case CorrectionBH, "fdr", "benjamini-hochberg":
		return CorrectionBH, nil
	case CorrectionNone:
		return CorrectionNone, nil
	}
	return "", fmt.Errorf("reports: unknown correction %q: want holm, bh or none", s)
}

// Adjust returns the p-values ps adjusted for multiple comparisons by
// correction c. NaN entries are not tests: they stay NaN and do not count
// in the family.
func Adjust(ps []float64, c string) []float64 {
	switch c {
	case CorrectionHolm:
		return Holm(ps)
	case CorrectionBH:
		return BenjaminiHochberg(ps)
	}
	return append([]float64(nil), ps...)
}

// order is the indices of the non-NaN entries of ps by increasing p (ties
// in input order).
func order(ps []float64) []int {
	var idx []int
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	return idx
}

// Holm is Holm's step-down adjustment (Holm 1979): with the m p-values
// sorted, p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted p₍ᵢ₎ is
// maxⱼ≤ᵢ min(1, (m − j + 1)·p₍ⱼ₎). Rejecting where it is < α controls the
// family-wise error rate at α under any dependence.
func Holm(ps []float64) []float64 {
	out := nanLike(ps)
	idx := order(ps)
	m := len(idx)
	run := 0.0
	for j, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-j)*ps[i]))
		out[i] = run
	}
	return out
}

// BenjaminiHochberg is the Benjamini–Hochberg step-up adjustment
// (Benjamini & Hochberg 1995): the adjusted p₍ᵢ₎ is
// minⱼ≥ᵢ min(1, m·p₍ⱼ₎ / j). Rejecting where it is < α controls the false
// discovery rate at α for independent or positively dependent tests.
func BenjaminiHochberg(ps []float64) []float64 {
	out := nanLike(ps)
	idx := order(ps)
	m := len(idx)
	run := 1.0
	for j := m - 1; j >= 0; j-- {
		i := idx[j]
		run = math.Min(run, math.Min(1, float64(m)*ps[i]/float64(j+1)))
		out[i] = run
	}
	return out
}

func nanLike(ps []float64) []float64 {
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
