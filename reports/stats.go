package reports

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes the values of one metric over the runs of one group
// (normally one value per seed).
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// Std is the sample standard deviation with Bessel's correction,
	// sqrt(Σ(x−x̄)²/(n−1)); NaN when n < 2.
	Std float64 `json:"std"`
	// CILo and CIHi bound the confidence interval (t or bootstrap) of
	// the mean (NaN when not computed).
	CILo float64 `json:"ci_lo"`
	CIHi float64 `json:"ci_hi"`
	// Values in the order of the runs (seed order).
	Values []float64 `json:"values"`
}

// Summarize returns the mean and the n−1 standard deviation of xs, without
// a confidence interval.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs), Mean: math.NaN(), Std: math.NaN(), CILo: math.NaN(), CIHi: math.NaN(),
		Values: append([]float64(nil), xs...)}
	if len(xs) == 0 {
		return s
	}
	s.Mean = Mean(xs)
	if len(xs) > 1 {
		s.Std = math.Sqrt(Variance(xs))
	}
	return s
}

// Mean is Σx/n (NaN for an empty slice).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	// Compensated summation keeps golden numbers stable to the last digit.
	var sum, c float64
	for _, x := range xs {
		y := x - c
		t := sum + y
		c = (t - sum) - y
		sum = t
	}
	return sum / float64(len(xs))
}

// Variance is the unbiased sample variance Σ(x−x̄)²/(n−1), computed in
// two passes (NaN when n < 2).
func Variance(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss, comp float64
	for _, x := range xs {
		d := x - m
		ss += d * d
		comp += d
	}
	// Corrected two-pass formula (Chan, Golub & LeVeque 1983).
	return (ss - comp*comp/float64(n)) / float64(n-1)
}

// TTest is the result of Welch's unequal-variances t-test.
type TTest struct {
	// Delta is mean(a) − mean(b).
	Delta float64 `json:"delta"`
	// T = (x̄_a − x̄_b) / sqrt(s_a²/n_a + s_b²/n_b).
	T float64 `json:"t"`
	// DF is the Welch–Satterthwaite degrees of freedom
	// (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1)).
	DF float64 `json:"df"`
	// P is the two-sided p-value 2·P(T_ν > |t|) of Student's t
	// distribution with ν = DF.
	P      float64 `json:"p"`
	NA, NB int     `json:"-"`
}

// ErrTooFewSamples is returned by WelchT when a side has fewer than two values.
var ErrTooFewSamples = errors.New("reports: a t-test needs at least two values on each side")

// ErrZeroVariance is returned by WelchT when both samples are constant, so
// that neither t nor the degrees of freedom are defined.
var ErrZeroVariance = errors.New("reports: both samples have zero variance")

// WelchT runs Welch's two-sample t-test of H0: mean(a) = mean(b) against
// the two-sided alternative (Welch 1947, "The generalization of
// 'Student's' problem when several different population variances are
// involved", Biometrika 34). The p-value uses gonum's StudentsT
// distribution with the non-integer Welch–Satterthwaite degrees of freedom.
func WelchT(a, b []float64) (TTest, error) {
	na, nb := len(a), len(b)
	r := TTest{NA: na, NB: nb, Delta: Mean(a) - Mean(b), T: math.NaN(), DF: math.NaN(), P: math.NaN()}
	if na < 2 || nb < 2 {
		return r, ErrTooFewSamples
	}
	for _, x := range append(append([]float64(nil), a...), b...) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return r, fmt.Errorf("reports: t-test on non-finite value %v", x)
		}
	}
	va, vb := Variance(a)/float64(na), Variance(b)/float64(nb)
	se2 := va + vb
	if se2 == 0 {
		return r, ErrZeroVariance
	}
	r.T = r.Delta / math.Sqrt(se2)
	r.DF = se2 * se2 / (va*va/float64(na-1) + vb*vb/float64(nb-1))
	r.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: r.DF}.Survival(math.Abs(r.T))
	if r.P > 1 {
		r.P = 1
	}
	return r, nil
}

// Interval methods of Options.CIMethod.
const (
	CIAuto      = "auto"
	CIT         = "t"
	CIBootstrap = "bootstrap"
)

// BootstrapMinN is the smallest sample the percentile bootstrap is used
// for. Below it the bootstrap distribution of the mean has too few distinct
// values and its percentile interval is too narrow: with 3 seeds it is
// close to the range of the 3 values (Efron & Tibshirani 1993, §13.3, warn
// that the percentile interval undercovers in small samples).
const BootstrapMinN = 20

// useBootstrap applies method to a cell of n values.
func useBootstrap(method string, n int) (bool, error) {
	switch method {
	case CIT:
		return false, nil
	case CIBootstrap:
		if n < BootstrapMinN {
			return false, fmt.Errorf("reports: a percentile bootstrap of %d values undercovers (it needs at least %d); use the t-interval (--ci-method t or auto)", n, BootstrapMinN)
		}
		return true, nil
	}
	return n >= BootstrapMinN, nil
}

// TMeanCI returns Student's t confidence interval of the mean at level:
// x̄ ± t_{(1+level)/2, n−1} · s/√n, with s the sample standard deviation
// (n − 1 in the denominator). It needs n ≥ 2.
func TMeanCI(xs []float64, level float64) (lo, hi float64, err error) {
	n := len(xs)
	if n < 2 {
		return math.NaN(), math.NaN(), ErrTooFewSamples
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile((1 + level) / 2)
	m, h := Mean(xs), q*math.Sqrt(Variance(xs)/float64(n))
	return m - h, m + h, nil
}

// WelchDeltaCI returns the confidence interval of mean(a) − mean(b) at
// level that belongs to Welch's test (WelchT): Δ ± t_{(1+level)/2, ν} · se,
// with se² = s²_a/n_a + s²_b/n_b and ν the Welch–Satterthwaite degrees of
// freedom. Both samples constant give ErrZeroVariance and the point Δ.
func WelchDeltaCI(a, b []float64, level float64) (lo, hi float64, err error) {
	tt, err := WelchT(a, b)
	if errors.Is(err, ErrZeroVariance) {
		return tt.Delta, tt.Delta, err
	}
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	se := math.Sqrt(Variance(a)/float64(len(a)) + Variance(b)/float64(len(b)))
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: tt.DF}.Quantile((1+level)/2) * se
	return tt.Delta - h, tt.Delta + h, nil
}

// BootstrapMeanCI returns the percentile-bootstrap confidence interval of
// the mean of xs at the given level (e.g. 0.95) from b resamples drawn with
// rng (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", §13.3).
// The quantiles are taken with linear interpolation between order
// statistics (type 7 of Hyndman & Fan 1996).
func BootstrapMeanCI(xs []float64, level float64, b int, rng *rand.Rand) (lo, hi float64, err error) {
	return bootstrap([][]float64{xs}, level, b, rng, func(s [][]float64) float64 { return Mean(s[0]) })
}

// BootstrapDeltaCI returns the percentile-bootstrap confidence interval of
// mean(a) − mean(b), resampling a and b independently.
func BootstrapDeltaCI(a, b []float64, level float64, nboot int, rng *rand.Rand) (lo, hi float64, err error) {
	return bootstrap([][]float64{a, b}, level, nboot, rng, func(s [][]float64) float64 { return Mean(s[0]) - Mean(s[1]) })
}

func bootstrap(samples [][]float64, level float64, b int, rng *rand.Rand, stat func([][]float64) float64) (float64, float64, error) {
	nan := math.NaN()
	switch {
	case rng == nil:
		return nan, nan, errors.New("reports: bootstrap needs a seeded *rand.Rand")
	case !(level > 0 && level < 1):
		return nan, nan, fmt.Errorf("reports: confidence level %v must lie in (0, 1)", level)
	case b < 1:
		return nan, nan, fmt.Errorf("reports: bootstrap needs at least one resample, got %d", b)
	}
	for _, s := range samples {
		if len(s) == 0 {
			return nan, nan, errors.New("reports: bootstrap of an empty sample")
		}
	}
	res := make([][]float64, len(samples))
	for i, s := range samples {
		res[i] = make([]float64, len(s))
	}
	stats := make([]float64, b)
	for k := range stats {
		for i, s := range samples {
			for j := range res[i] {
				res[i][j] = s[rng.IntN(len(s))]
			}
		}
		stats[k] = stat(res)
	}
	sort.Float64s(stats)
	alpha := (1 - level) / 2
	return Quantile(stats, alpha), Quantile(stats, 1-alpha), nil
}

// Quantile returns the p-quantile of sorted xs by linear interpolation
// between order statistics: h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋])
// (Hyndman & Fan 1996, type 7; numpy's and R's default).
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
