package reports

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestMeanVariance(t *testing.T) {
	// Hand computed: mean(2,4,4,4,5,5,7,9) = 5, Σ(x−5)² = 32, s² = 32/7.
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	if m := Mean(xs); m != 5 {
		t.Fatalf("mean = %v, want 5", m)
	}
	if v := Variance(xs); !near(v, 32.0/7, 1e-15) {
		t.Fatalf("variance = %v, want 32/7", v)
	}
	s := Summarize([]float64{60, 62, 64})
	if s.N != 3 || s.Mean != 62 || !near(s.Std, 2, 1e-15) {
		t.Fatalf("summary = %+v, want 62 ± 2 (n=3)", s)
	}
	if s := Summarize([]float64{1}); !math.IsNaN(s.Std) || s.Mean != 1 {
		t.Fatalf("n=1 summary = %+v, want std NaN", s)
	}
	if s := Summarize(nil); !math.IsNaN(s.Mean) {
		t.Fatalf("empty summary mean = %v, want NaN", s.Mean)
	}
}

// TestWelchTextbook checks Welch's test against the two worked examples of
// Wikipedia's "Welch's t-test" article (t = −2.46, ν = 25.0, p = 0.021 and
// t = −1.57, ν = 9.9, p = 0.149) and, to more digits, against an independent
// Python implementation (t and ν by the formulas, p by Simpson integration
// of the Student-t density with 2·10⁵ intervals).
func TestWelchTextbook(t *testing.T) {
	cases := []struct {
		a, b       []float64
		t, df, p   float64
		tr, dr, pr float64 // rounded textbook values
	}{
		{
			a: []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
			b: []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
			t: -2.45535639828601, df: 24.98852929023142, p: 0.021378001462866825,
			tr: -2.46, dr: 25.0, pr: 0.021,
		},
		{
			a: []float64{17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8},
			b: []float64{21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8},
			t: -1.5654335235985073, df: 9.904741248650831, p: 0.1488416966053279,
			tr: -1.57, dr: 9.9, pr: 0.149,
		},
		{ // the margin vs triplet R@1 columns of testdata/runs (hand: t = 3/√(5/3), ν = 50/17)
			a: []float64{60, 62, 64}, b: []float64{58, 59, 60},
			t: 2.32379000772445, df: 2.9411764705882346, p: 0.10447888668472281,
			tr: 2.32, dr: 2.94, pr: 0.104,
		},
	}
	for i, c := range cases {
		r, err := WelchT(c.a, c.b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !near(r.T, c.t, 1e-12) || !near(r.DF, c.df, 1e-12) || !near(r.P, c.p, 1e-9) {
			t.Errorf("case %d: t=%v df=%v p=%v, want t=%v df=%v p=%v", i, r.T, r.DF, r.P, c.t, c.df, c.p)
		}
		if math.Abs(r.T-c.tr) > 0.005 || math.Abs(r.DF-c.dr) > 0.05 || math.Abs(r.P-c.pr) > 0.0005 {
			t.Errorf("case %d: rounded values differ from the textbook: t=%.2f df=%.1f p=%.3f", i, r.T, r.DF, r.P)
		}
		// Symmetry: swapping the samples flips t and keeps p.
		s, _ := WelchT(c.b, c.a)
		if !near(s.T, -r.T, 1e-14) || !near(s.P, r.P, 1e-14) {
			t.Errorf("case %d: swapped t=%v p=%v", i, s.T, s.P)
		}
	}
}

// TestWelchCriticalValue: equal variances and sizes reduce Welch's ν to
// 2(n−1); t at the textbook 97.5% quantile t_{0.975,ν} gives p = 0.05.
func TestWelchCriticalValue(t *testing.T) {
	// n = 6 each ⇒ ν = 10; t_{0.975,10} = 2.228138851986274 (tables: 2.228).
	// With a = b + δ and identical spread, t = δ / sqrt(2 s²/n).
	b := []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5} // s² = 3.5
	delta := 2.228138851986274 * math.Sqrt(2*3.5/6)
	a := make([]float64, len(b))
	for i := range b {
		a[i] = b[i] + delta
	}
	r, err := WelchT(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.DF, 10, 1e-12) || !near(r.P, 0.05, 1e-9) {
		t.Fatalf("df=%v p=%v, want 10 and 0.05", r.DF, r.P)
	}
}

func TestWelchErrors(t *testing.T) {
	if _, err := WelchT([]float64{1}, []float64{1, 2}); !errors.Is(err, ErrTooFewSamples) {
		t.Fatalf("n=1: err = %v", err)
	}
	if _, err := WelchT([]float64{1, 1}, []float64{2, 2}); !errors.Is(err, ErrZeroVariance) {
		t.Fatalf("constant: err = %v", err)
	}
	if _, err := WelchT([]float64{1, math.NaN()}, []float64{2, 3}); err == nil {
		t.Fatal("NaN accepted")
	}
	// One constant side is fine: ν = n_other − 1.
	r, err := WelchT([]float64{1, 1, 1}, []float64{0, 1, 2})
	if err != nil || !near(r.DF, 2, 1e-12) {
		t.Fatalf("one-sided variance: %+v %v", r, err)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {1, 5}, {0.5, 3}, {0.25, 2}, {0.1, 1.4}, {0.975, 4.9}} {
		if q := Quantile(xs, c.p); !near(q, c.want, 1e-14) {
			t.Errorf("Quantile(%v) = %v, want %v", c.p, q, c.want)
		}
	}
}

func TestBootstrap(t *testing.T) {
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
	// Constant data: every resample has the same mean.
	lo, hi, err := BootstrapMeanCI([]float64{3, 3, 3}, 0.95, 200, rng())
	if err != nil || lo != 3 || hi != 3 {
		t.Fatalf("constant CI = [%v, %v] %v", lo, hi, err)
	}
	// Same seed ⇒ same interval.
	xs := []float64{60, 62, 64, 61, 59}
	l1, h1, _ := BootstrapMeanCI(xs, 0.95, 1000, rng())
	l2, h2, _ := BootstrapMeanCI(xs, 0.95, 1000, rng())
	if l1 != l2 || h1 != h2 || !(l1 < Mean(xs) && Mean(xs) < h1) || l1 < 59 || h1 > 64 {
		t.Fatalf("CI [%v, %v] vs [%v, %v]", l1, h1, l2, h2)
	}
	// Large normal sample: percentile CI ≈ x̄ ± 1.96·s/√n (tolerance 10%
	// of the half-width; bootstrap SE uses the 1/n variance).
	src := rand.New(rand.NewPCG(7, 7))
	big := make([]float64, 400)
	for i := range big {
		big[i] = src.NormFloat64()*2 + 10
	}
	lo, hi, err = BootstrapMeanCI(big, 0.95, 4000, rng())
	if err != nil {
		t.Fatal(err)
	}
	half := 1.959964 * math.Sqrt(Variance(big)*float64(len(big)-1)/float64(len(big))) / math.Sqrt(float64(len(big)))
	m := Mean(big)
	if math.Abs((hi-lo)/2-half) > 0.1*half || math.Abs((hi+lo)/2-m) > 0.1*half {
		t.Fatalf("CI [%v, %v], want ≈ %v ± %v", lo, hi, m, half)
	}
	// Delta CI of two shifted copies is centred on the shift.
	b := make([]float64, len(big))
	for i := range big {
		b[i] = big[i] - 1
	}
	lo, hi, err = BootstrapDeltaCI(big, b, 0.95, 2000, rng())
	if err != nil || !(lo < 1 && 1 < hi) {
		t.Fatalf("delta CI [%v, %v] %v", lo, hi, err)
	}
	for _, bad := range []func() error{
		func() error { _, _, e := BootstrapMeanCI(nil, 0.95, 10, rng()); return e },
		func() error { _, _, e := BootstrapMeanCI(xs, 1.5, 10, rng()); return e },
		func() error { _, _, e := BootstrapMeanCI(xs, 0.95, 0, rng()); return e },
		func() error { _, _, e := BootstrapMeanCI(xs, 0.95, 10, nil); return e },
	} {
		if bad() == nil {
			t.Error("bad bootstrap input accepted")
		}
	}
}
