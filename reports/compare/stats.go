package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
)

// Options configure Compare.
type Options struct {
	// Resamples is the number of bootstrap resamples and of sign-flip
	// permutations.
	Resamples int
	// Seed seeds both; the same seed gives the same interval and p.
	Seed uint64
	// Level is the confidence level of the interval (0.95).
	Level float64
	// Average: the metrics are means over queries (metrics.PerQuery) or
	// means of class means (metrics.PerClass).
	Average metrics.Average
}

// DefaultResamples is Options.Resamples unless set: a p-value resolution
// of 1/10 000 and a 95 % interval whose ends move by well under its width's
// hundredth between seeds.
const DefaultResamples = 10000

// zPower is z_{1−α/2} + z_{power} for α = 0.05 (two-sided) and 80 % power:
// 1.959964 + 0.841621. A true difference of zPower standard errors is
// found significant four times out of five (Cohen 1988).
const zPower = 2.801585

// Test is the paired comparison of one metric.
type Test struct {
	Key string
	// A, B are the metric values of the two embeddings, Diff = B − A.
	A, B, Diff float64
	// Testable: the metric is a mean of per-query values, which the tests
	// resample; otherwise (clustering, whole-embedding metrics) only A, B
	// and Diff are set and Why says why.
	Testable bool
	Why      string
	// Lo, Hi: the percentile-bootstrap interval of B − A at Options.Level,
	// resampling classes with replacement.
	Lo, Hi float64
	// P is the two-sided p-value of the sign-flip permutation test over
	// classes: (1 + #{|t*| ≥ |t|}) / (1 + Resamples).
	P float64
	// SE is the standard deviation of the bootstrap differences, MDD =
	// zPower·SE the smallest difference detectable at this size (α = 0.05,
	// 80 % power).
	SE, MDD float64
	// Classes is the number of classes resampled (those with a counted
	// query).
	Classes int
	// PMaxT is P adjusted over a family of tests by the class-level
	// sign-flip max-T (MaxT); 0 when not adjusted.
	PMaxT float64
}

// classTerms are one metric's paired per-class terms: the statistic is
// Σ num / Σ den over the classes drawn.
type classTerms struct {
	num, den []float64
	class    []int32 // the class of each term, to pair terms across tests
}

// terms collects the paired per-class terms of column j: the summed
// differences b − a of the counted queries and their count (query
// averaging), or the difference of the class means and 1 (per-class
// averaging). a and b must hold the same queries, counted alike.
func terms(a, b *metrics.QueryValues, ja, jb int, avg metrics.Average) (classTerms, error) {
	va, vb := a.Values[ja], b.Values[jb]
	if avg == metrics.PerClass {
		_, ma := a.ClassMeans(ja)
		_, mb := b.ClassMeans(jb)
		var t classTerms
		for c := range ma {
			if math.IsNaN(ma[c]) != math.IsNaN(mb[c]) {
				return t, fmt.Errorf("%s: a class counts for one embedding only", a.Keys[ja])
			}
			if !math.IsNaN(ma[c]) {
				t.num = append(t.num, mb[c]-ma[c])
				t.den = append(t.den, 1)
				t.class = append(t.class, int32(c))
			}
		}
		return t, nil
	}
	pos := map[int32]int{}
	var t classTerms
	for i := range va {
		if math.IsNaN(va[i]) != math.IsNaN(vb[i]) {
			return t, fmt.Errorf("%s: query %d counts for one embedding only", a.Keys[ja], a.Index[i])
		}
		if math.IsNaN(va[i]) {
			continue
		}
		c, ok := pos[a.Class[i]]
		if !ok {
			c = len(t.num)
			pos[a.Class[i]] = c
			t.num = append(t.num, 0)
			t.den = append(t.den, 0)
			t.class = append(t.class, a.Class[i])
		}
		t.num[c] += vb[i] - va[i]
		t.den[c]++
	}
	return t, nil
}

// sameQueries checks that a and b describe the same queries.
func sameQueries(a, b *metrics.QueryValues) error {
	if len(a.Index) != len(b.Index) {
		return fmt.Errorf("the embeddings have %d and %d queries: compare needs the same test set", len(a.Index), len(b.Index))
	}
	for i := range a.Index {
		if a.Index[i] != b.Index[i] || a.Class[i] != b.Class[i] {
			return fmt.Errorf("query %d differs (row %d class %s vs row %d class %s): compare needs the same queries and labels",
				i, a.Index[i], a.Labels[i], b.Index[i], b.Labels[i])
		}
	}
	return nil
}

// Compare tests, for each key, whether B differs from A. ra and rb are the
// two results (Evaluate with Options.PerQuery on the same queries); keys
// absent from the per-query values are reported untestable.
func Compare(ra, rb *metrics.Result, keys []string, opt Options) ([]Test, error) {
	out, _, err := compareTerms(ra, rb, keys, opt)
	return out, err
}

// compareTerms is Compare, also returning each test's class terms.
func compareTerms(ra, rb *metrics.Result, keys []string, opt Options) ([]Test, []classTerms, error) {
	if opt.Resamples < 1 {
		return nil, nil, fmt.Errorf("resamples %d: need at least 1", opt.Resamples)
	}
	if !(opt.Level > 0 && opt.Level < 1) {
		return nil, nil, fmt.Errorf("confidence level %v must lie in (0, 1)", opt.Level)
	}
	a, b := ra.PerQuery, rb.PerQuery
	if a == nil || b == nil {
		return nil, nil, errors.New("paired: results without per-query values (metrics.Options.PerQuery)")
	}
	if err := sameQueries(a, b); err != nil {
		return nil, nil, err
	}
	out := make([]Test, len(keys))
	cts := make([]classTerms, len(keys))
	for i, k := range keys {
		t := &out[i]
		*t = Test{Key: k, A: ra.Metrics[k], B: rb.Metrics[k]}
		t.Diff = t.B - t.A
		ja, jb := slices.Index(a.Keys, k), slices.Index(b.Keys, k)
		if ja < 0 || jb < 0 {
			t.Why = "no per-query values: one value for the whole set"
			continue
		}
		var err error
		if cts[i], err = terms(a, b, ja, jb, opt.Average); err != nil {
			return nil, nil, err
		}
		if len(cts[i].num) == 0 {
			t.Why = "no query has a relevant item: every query is alone in its class"
			continue
		}
		t.Testable, t.Classes = true, len(cts[i].num)
	}
	// Each metric draws from its own generators seeded alike: the numbers
	// depend neither on the threads nor on the other metrics asked.
	parallel.For(0, len(out), func(i int) {
		if t := &out[i]; t.Testable {
			t.Lo, t.Hi, t.SE = bootstrapCI(cts[i], opt)
			t.MDD = zPower * t.SE
			t.P = signFlipP(cts[i], opt)
		}
	})
	return out, cts, nil
}

// CompareMany compares every result after the first with the first
// (Compare), and adjusts the p-values of all those tests together by the
// class-level sign-flip max-T (MaxT): out[i] holds results[i+1] against
// results[0], each testable Test with PMaxT set.
func CompareMany(results []*metrics.Result, keys []string, opt Options) ([][]Test, error) {
	if len(results) < 2 {
		return nil, errors.New("compare needs at least two results")
	}
	out := make([][]Test, len(results)-1)
	var family []classTerms
	var where [][2]int
	for i, rb := range results[1:] {
		tests, cts, err := compareTerms(results[0], rb, keys, opt)
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", i+2, err)
		}
		out[i] = tests
		for j, t := range tests {
			if t.Testable {
				family = append(family, cts[j])
				where = append(where, [2]int{i, j})
			}
		}
	}
	for k, p := range maxTP(family, opt) {
		out[where[k][0]][where[k][1]].PMaxT = p
	}
	return out, nil
}

// bootstrapCI draws opt.Resamples sets of classes with replacement and
// returns the percentile interval of Σ num / Σ den (Hyndman and Fan 1996
// type-7 quantiles) and the standard deviation of the draws.
func bootstrapCI(ct classTerms, opt Options) (lo, hi, se float64) {
	rng := rand.New(rand.NewPCG(opt.Seed, 1))
	n := len(ct.num)
	stats := make([]float64, 0, opt.Resamples)
	for range opt.Resamples {
		num, den := 0.0, 0.0
		for range n {
			c := rng.IntN(n)
			num += ct.num[c]
			den += ct.den[c]
		}
		stats = append(stats, num/den) // den > 0: every class has a counted query
	}
	slices.Sort(stats)
	alpha := (1 - opt.Level) / 2
	return reports.Quantile(stats, alpha), reports.Quantile(stats, 1-alpha), math.Sqrt(reports.Variance(stats))
}

// signFlipP is the two-sided p-value of the paired permutation test over
// classes: under H0 (A and B exchangeable within each class) every class's
// summed difference is as likely negated. Ties count as extreme, so
// identical embeddings (every difference 0) give p = 1.
func signFlipP(ct classTerms, opt Options) float64 {
	rng := rand.New(rand.NewPCG(opt.Seed, 2))
	den, obs := 0.0, 0.0
	for c := range ct.num {
		den += ct.den[c]
		obs += ct.num[c]
	}
	obs = math.Abs(obs / den)
	// Sums of the same terms in another order may differ in the last bits:
	// a draw within that rounding of the observed value counts as a tie.
	tol := 1e-12 * max(obs, 1e-300)
	extreme := 0
	for range opt.Resamples {
		s := 0.0
		var bits uint64
		for c, x := range ct.num {
			if c%64 == 0 {
				bits = rng.Uint64()
			}
			if bits&1 == 1 {
				x = -x
			}
			bits >>= 1
			s += x
		}
		if math.Abs(s/den) >= obs-tol {
			extreme++
		}
	}
	return float64(1+extreme) / float64(1+opt.Resamples)
}

// maxTP is the single-step max-T adjustment (Westfall and Young 1993,
// Alg. 2.8) of a family of paired tests over the same classes, by sign
// flips of whole classes: one flip per class is drawn for every test at
// once, so the dependence between the tests (the same queries, several
// metrics, several embeddings against one) is kept. Test h's statistic is
// T_h = Σ_c x_hc / √(Σ_c x_hc²) over its class terms x_hc (its sign-flip
// standard deviation is √(Σ x²), so the tests are on one scale), and its
// adjusted p-value (1 + #{b : max_h' |T*_h'| ≥ |T_h|}) / (1 + B). Rejecting
// where it is < α keeps the probability of any false rejection ≤ α (the
// family-wise error rate, under subset pivotality). A test whose terms are
// all 0 has T = 0 and p = 1.
func maxTP(family []classTerms, opt Options) []float64 {
	if len(family) == 0 {
		return nil
	}
	idx := map[int32]int{}
	for _, ct := range family {
		for _, c := range ct.class {
			if _, ok := idx[c]; !ok {
				idx[c] = len(idx)
			}
		}
	}
	obs := make([]float64, len(family))
	scale := make([]float64, len(family))
	pos := make([][]int, len(family))
	for h, ct := range family {
		sum, sq := 0.0, 0.0
		for k, x := range ct.num {
			sum += x
			sq += x * x
			pos[h] = append(pos[h], idx[ct.class[k]])
		}
		if sq > 0 {
			scale[h] = 1 / math.Sqrt(sq)
			obs[h] = math.Abs(sum) * scale[h]
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 3))
	sign := make([]float64, len(idx))
	extreme := make([]int, len(family))
	for range opt.Resamples {
		for c := range sign {
			sign[c] = 1
			if rng.Uint64()&1 == 1 {
				sign[c] = -1
			}
		}
		m := 0.0
		for h, ct := range family {
			s := 0.0
			for k, x := range ct.num {
				s += sign[pos[h][k]] * x
			}
			m = math.Max(m, math.Abs(s)*scale[h])
		}
		for h := range family {
			// Ties, within rounding, count as extreme (as in signFlipP).
			if obs[h] == 0 || m >= obs[h]*(1-1e-12) {
				extreme[h]++
			}
		}
	}
	out := make([]float64, len(family))
	for h := range out {
		out[h] = float64(1+extreme[h]) / float64(1+opt.Resamples)
	}
	return out
}
