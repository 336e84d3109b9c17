package compare

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

// embed draws `classes` classes of `per` items around random unit-scale
// centres in d dimensions with noise sigma (the centres from rc, the noise
// from rn).
func embed(rc, rn *rand.Rand, classes, per, d int, sigma float64) (mat32.Matrix, []int32, [][]float64) {
	centres := make([][]float64, classes)
	for c := range centres {
		centres[c] = make([]float64, d)
		for j := range centres[c] {
			centres[c][j] = rc.NormFloat64()
		}
	}
	return noisy(rn, centres, per, sigma)
}

func noisy(rn *rand.Rand, centres [][]float64, per int, sigma float64) (mat32.Matrix, []int32, [][]float64) {
	d := len(centres[0])
	m := mat32.Matrix{Rows: len(centres) * per, Cols: d, Data: make([]float32, len(centres)*per*d)}
	labels := make([]int32, m.Rows)
	for i := range labels {
		c := i % len(centres)
		labels[i] = int32(c)
		for j := 0; j < d; j++ {
			m.Data[i*d+j] = float32(centres[c][j] + sigma*rn.NormFloat64())
		}
	}
	return m, labels, centres
}

func evalPQ(t *testing.T, m mat32.Matrix, labels []int32) *metrics.Result {
	t.Helper()
	res, err := metrics.Evaluate(context.Background(), metrics.Input{Emb: m, Labels: labels},
		metrics.Options{Metrics: []string{"R@1", "MAP@R"}, PerQuery: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var keys = []string{"R@1", "MAP@R"}

// Identical embeddings: a difference of exactly 0, the interval [0, 0]
// and p = 1; the same seed gives the same numbers.
func TestIdenticalInputs(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	m, y, _ := embed(r, r, 12, 6, 8, 0.8)
	a, b := evalPQ(t, m, y), evalPQ(t, m, y)
	tests, err := Compare(a, b, append(keys, "NMI"), Options{Resamples: 999, Seed: 3, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tests[:2] {
		if x.Diff != 0 || x.Lo != 0 || x.Hi != 0 || x.P != 1 || !x.Testable || x.Classes != 12 {
			t.Errorf("%s: %+v", x.Key, x)
		}
	}
	if tests[2].Testable || tests[2].Why == "" {
		t.Errorf("NMI (no per-query values) tested: %+v", tests[2])
	}
	tests, err = Compare(a, b, keys, Options{Resamples: 99, Seed: 3, Level: 0.95, Average: metrics.PerClass})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tests {
		if x.Diff != 0 || x.Lo != 0 || x.Hi != 0 || x.P != 1 || x.Classes != 12 {
			t.Errorf("per-class %s: %+v", x.Key, x)
		}
	}
	if _, err := Compare(a, evalPQ(t, m, append([]int32{5}, y[1:]...)), keys, Options{Resamples: 9, Level: 0.95}); err == nil {
		t.Error("results of other labels compared")
	}
}

// The paired sign-flip test over classes, hand-checked: two classes with
// summed differences +1 (2 queries) and +3 (2 queries); the statistic is
// Σ num / Σ den = 1, and of the four sign patterns two (++, −−) reach
// |1|, so p → 1/2 as the permutations grow. The bootstrap draws {1,1},
// {1,3}, {3,1}, {3,3}: means 0.5, 1, 1, 1.5.
func TestSignFlipHandComputed(t *testing.T) {
	t.Parallel()
	ct := classTerms{num: []float64{1, 3}, den: []float64{2, 2}}
	opt := Options{Resamples: 200000, Seed: 7, Level: 0.5}
	if p := signFlipP(ct, opt); math.Abs(p-0.5) > 0.005 {
		t.Errorf("p = %v, want ≈ 0.5", p)
	}
	lo, hi, _ := bootstrapCI(ct, opt)
	if lo != 1 || hi != 1 { // quartiles of {0.5 ×¼, 1 ×½, 1.5 ×¼}
		t.Errorf("50 %% interval [%v, %v], want [1, 1]", lo, hi)
	}
	opt.Level = 0.9
	lo, hi, _ = bootstrapCI(ct, opt)
	if lo != 0.5 || hi != 1.5 {
		t.Errorf("90 %% interval [%v, %v], want [0.5, 1.5]", lo, hi)
	}
}

// Under the null (B = the same classes with fresh noise of the same
// scale) the test rejects at 0.05 about 5 % of the time over 200
// repetitions; with a real degradation (twice the noise) it rejects.
func TestFalsePositiveRateAndPower(t *testing.T) {
	t.Parallel()
	const reps, classes, per, d = 200, 16, 5, 6
	opt := Options{Resamples: 499, Seed: 11, Level: 0.95}
	rc, rn := rand.New(rand.NewPCG(5, 1)), rand.New(rand.NewPCG(5, 2))
	rejected, outside := 0, 0
	for rep := range reps {
		ma, y, centres := embed(rc, rn, classes, per, d, 0.9)
		mb, _, _ := noisy(rn, centres, per, 0.9)
		opt.Seed = uint64(rep)
		tests, err := Compare(evalPQ(t, ma, y), evalPQ(t, mb, y), keys[1:], opt)
		if err != nil {
			t.Fatal(err)
		}
		if tests[0].P <= 0.05 {
			rejected++
		}
		if tests[0].Lo > 0 || tests[0].Hi < 0 {
			outside++
		}
	}
	rate := float64(rejected) / reps
	// Binomial(200, 0.05): sd 0.015; [0.015, 0.095] is ±3 sd.
	if rate < 0.015 || rate > 0.095 {
		t.Errorf("false-positive rate at 0.05: %.3f over %d repetitions", rate, reps)
	}
	t.Logf("null: p ≤ 0.05 in %d / %d, 95 %% interval excludes 0 in %d / %d", rejected, reps, outside, reps)
	detected := 0
	for range 20 {
		ma, y, centres := embed(rc, rn, classes, per, d, 0.6)
		mb, _, _ := noisy(rn, centres, per, 1.2)
		tests, err := Compare(evalPQ(t, ma, y), evalPQ(t, mb, y), keys, opt)
		if err != nil {
			t.Fatal(err)
		}
		if tests[1].P <= 0.05 && tests[1].Hi < 0 && tests[1].Diff < 0 {
			detected++
		}
	}
	if detected < 18 {
		t.Errorf("a real degradation detected %d / 20 times", detected)
	}
}

// The same seed gives the same interval and p, whatever the metrics asked
// alongside; another seed moves them.
func TestSeeded(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8, 8))
	ma, y, centres := embed(r, r, 10, 6, 6, 0.7)
	mb, _, _ := noisy(r, centres, 6, 0.9)
	a, b := evalPQ(t, ma, y), evalPQ(t, mb, y)
	opt := Options{Resamples: 500, Seed: 4, Level: 0.95}
	both, err := Compare(a, b, keys, opt)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := Compare(a, b, keys[1:], opt)
	if both[1] != alone[0] {
		t.Errorf("MAP@R with R@1 %+v, alone %+v", both[1], alone[0])
	}
	opt.Seed = 5
	other, _ := Compare(a, b, keys[1:], opt)
	if other[0].Lo == alone[0].Lo && other[0].Hi == alone[0].Hi && other[0].P == alone[0].P {
		t.Errorf("seed 4 and 5 agree: %+v", other[0])
	}
}
