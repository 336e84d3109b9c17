package reports

import (
	"math"
	"strings"
	"testing"
)

// The expected values are scipy 1.10's: stats.t.interval(0.95, n−1,
// loc=mean, scale=stats.sem(x)), and for Δ the Welch–Satterthwaite degrees
// of freedom with stats.t.ppf.
func TestTMeanCI(t *testing.T) {
	lo, hi, err := TMeanCI([]float64{1, 2, 3}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// gonum's t quantile agrees with scipy's to about 1e-10.
	if math.Abs(lo-(-0.48413771184375287)) > 1e-9 || math.Abs(hi-4.484137711843752) > 1e-9 {
		t.Errorf("t-interval of {1,2,3} = [%v, %v], want [-0.484137711843753, 4.484137711843752]", lo, hi)
	}
	if _, _, err := TMeanCI([]float64{1}, 0.95); err == nil {
		t.Error("a t-interval of one value has no spread: want an error")
	}
}

func TestWelchDeltaCI(t *testing.T) {
	a, b := []float64{40.1, 41.3, 39.8}, []float64{38.0, 38.9, 37.2, 38.4}
	lo, hi, err := WelchDeltaCI(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lo-0.6833186336662724) > 1e-9 || math.Abs(hi-3.866681366333725) > 1e-9 {
		t.Errorf("Welch interval = [%v, %v], want [0.68331863, 3.86668137]", lo, hi)
	}
	tt, _ := WelchT(a, b)
	if math.Abs(tt.P-0.01614179662303571) > 1e-9 {
		t.Errorf("Welch p = %v, want 0.0161417966 (scipy ttest_ind, equal_var=False)", tt.P)
	}
}

// With 3 seeds the percentile bootstrap is refused on request and auto
// falls back to the t-interval, which the legend names.
func TestCIMethodSmallSamples(t *testing.T) {
	for _, c := range []struct {
		method string
		n      int
		boot   bool
		fails  bool
	}{
		{CIAuto, 3, false, false}, {CIAuto, BootstrapMinN, true, false},
		{CIT, 50, false, false}, {CIBootstrap, 3, false, true}, {CIBootstrap, BootstrapMinN, true, false},
	} {
		boot, err := useBootstrap(c.method, c.n)
		if (err != nil) != c.fails || boot != c.boot {
			t.Errorf("useBootstrap(%s, %d) = %v, %v; want bootstrap %v, error %v", c.method, c.n, boot, err, c.boot, c.fails)
		}
	}
	opt := Options{CI: 0.95, Bootstrap: 10000, Seed: 1}
	if got := ciNote(opt, true, false, "the mean"); !strings.Contains(got, "t-interval") || strings.Contains(got, "bootstrap") {
		t.Errorf("t-only note = %q", got)
	}
	if got := ciNote(opt, true, true, "the mean"); !strings.Contains(got, "where n < 20") {
		t.Errorf("mixed note = %q", got)
	}
}
