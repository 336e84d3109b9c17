package search

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// Param is one dimension of a search space: a range (Low, High, optionally
// Log or Int) or, when Values is not empty, a categorical parameter.
type Param struct {
	Name      string
	Low, High float64
	// Log searches the range uniformly in log(x) (both bounds > 0).
	Log bool
	// Int rounds the proposed value to the nearest integer.
	Int bool
	// Values are the choices of a categorical parameter.
	Values []string
}

// Categorical reports whether p is a list of values.
func (p Param) Categorical() bool { return len(p.Values) > 0 }

// Validate reports an unusable parameter: an empty or reversed range, a
// log range touching or crossing 0, a non-finite bound, repeated values.
func (p Param) Validate() error {
	if p.Categorical() {
		seen := map[string]bool{}
		for _, v := range p.Values {
			if seen[v] {
				return fmt.Errorf("%s: value %q given twice", p.Name, v)
			}
			seen[v] = true
		}
		return nil
	}
	switch {
	case math.IsNaN(p.Low) || math.IsNaN(p.High) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0):
		return fmt.Errorf("%s: range [%v, %v] must be finite", p.Name, p.Low, p.High)
	case p.Low > p.High:
		return fmt.Errorf("%s: low %v > high %v", p.Name, p.Low, p.High)
	case p.Low == p.High:
		return fmt.Errorf("%s: empty range (low = high = %v; use values: [%v] to fix it)", p.Name, p.Low, p.Low)
	case p.Log && p.Low <= 0:
		return fmt.Errorf("%s: log range [%v, %v] must lie above 0", p.Name, p.Low, p.High)
	case p.Int && math.Floor(p.High) < math.Ceil(p.Low):
		return fmt.Errorf("%s: integer range [%v, %v] holds no integer", p.Name, p.Low, p.High)
	}
	return nil
}

// bounds are p's range in search coordinates (log(x) for a log range).
func (p Param) bounds() (a, b float64) {
	if p.Log {
		return math.Log(p.Low), math.Log(p.High)
	}
	return p.Low, p.High
}

// toSearch maps a value to search coordinates; fromSearch back, rounding
// integer parameters and clamping to the range.
func (p Param) toSearch(x float64) float64 {
	if p.Log {
		return math.Log(x)
	}
	return x
}

func (p Param) fromSearch(t float64) float64 {
	x := t
	if p.Log {
		x = math.Exp(t)
	}
	if p.Int {
		x = math.Round(x)
		return math.Min(math.Max(x, math.Ceil(p.Low)), math.Floor(p.High))
	}
	return math.Min(math.Max(x, p.Low), p.High)
}

// Format is the value v of p as text: the categorical value, an integer,
// or the shortest float that reads back as v.
func (p Param) Format(v float64) string {
	switch {
	case p.Categorical():
		i := int(v)
		if i < 0 || i >= len(p.Values) {
			return "?"
		}
		return p.Values[i]
	case p.Int:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Space is the list of parameters searched together.
type Space []Param

// Validate checks every parameter and that names are distinct and non-empty.
func (s Space) Validate() error {
	if len(s) == 0 {
		return errors.New("empty search space")
	}
	seen := map[string]bool{}
	for _, p := range s {
		if p.Name == "" {
			return errors.New("a parameter has no name")
		}
		if seen[p.Name] {
			return fmt.Errorf("parameter %s given twice", p.Name)
		}
		seen[p.Name] = true
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Point is one configuration: Point[i] is the value of Space[i] (the index
// of the value for a categorical parameter).
type Point []float64

// Observation is a finished trial: its point and score (higher is better;
// NaN: the trial failed and counts as the worst).
type Observation struct {
	Point Point
	Score float64
}

// Proposer proposes the points of trials first … first+n−1 from the
// observations of finished trials.
type Proposer interface {
	Propose(space Space, history []Observation, first, n int) []Point
}

// trialRNG is the random stream of trial i under seed (PCG with the trial
// index as stream selector, so trials draw independent streams).
func trialRNG(seed int64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9E3779B97F4A7C15*uint64(i+1)))
}

// Random is random search (Bergstra & Bengio 2012): every parameter drawn
// uniformly (in log(x) for log ranges), categorical values with equal
// probability, independently of the history.
type Random struct{ Seed int64 }

// Propose draws n points; trial i's point depends only on Seed and i.
func (r Random) Propose(space Space, _ []Observation, first, n int) []Point {
	out := make([]Point, n)
	for j := range out {
		out[j] = randomPoint(space, trialRNG(r.Seed, first+j))
	}
	return out
}

func randomPoint(space Space, rng *rand.Rand) Point {
	pt := make(Point, len(space))
	for i, p := range space {
		if p.Categorical() {
			pt[i] = float64(rng.IntN(len(p.Values)))
			continue
		}
		a, b := p.bounds()
		pt[i] = p.fromSearch(a + rng.Float64()*(b-a))
	}
	return pt
}

// TPE is the Tree-structured Parzen Estimator (see the package comment).
// Zero fields take the defaults of Bergstra et al.'s hyperopt: Startup 10
// (at least 1), Gamma 0.25, Candidates 24, PriorWeight 1.
type TPE struct {
	Seed        int64
	Startup     int
	Gamma       float64
	Candidates  int
	PriorWeight float64
}

func (t TPE) withDefaults() TPE {
	if t.Startup <= 0 {
		t.Startup = 10
	}
	if t.Gamma <= 0 || t.Gamma >= 1 {
		t.Gamma = 0.25
	}
	if t.Candidates <= 0 {
		t.Candidates = 24
	}
	if t.PriorWeight <= 0 {
		t.PriorWeight = 1
	}
	return t
}

// Propose returns the points of trials first … first+n−1: random while the
// trial index is below Startup or fewer than two trials have finished,
// else the TPE choice from the history plus the batch's earlier points as
// bad observations.
func (t TPE) Propose(space Space, history []Observation, first, n int) []Point {
	t = t.withDefaults()
	good, bad := t.split(history)
	out := make([]Point, n)
	for j := range out {
		i := first + j
		rng := trialRNG(t.Seed, i)
		if i < t.Startup || len(history) < 2 {
			out[j] = randomPoint(space, rng)
		} else {
			out[j] = t.choose(space, good, bad, rng)
		}
		bad = append(bad, out[j])
	}
	return out
}

// split sorts the observations by score (best first; NaN last; ties by
// order) and returns the ⌈γ·n⌉ best and the rest.
func (t TPE) split(history []Observation) (good, bad []Point) {
	idx := make([]int, len(history))
	for i := range idx {
		idx[i] = i
	}
	score := func(i int) float64 {
		if s := history[i].Score; !math.IsNaN(s) {
			return s
		}
		return math.Inf(-1)
	}
	sort.SliceStable(idx, func(a, b int) bool { return score(idx[a]) > score(idx[b]) })
	nGood := int(math.Ceil(t.Gamma * float64(len(history))))
	nGood = max(1, min(nGood, len(history)))
	for r, i := range idx {
		if r < nGood {
			good = append(good, history[i].Point)
		} else {
			bad = append(bad, history[i].Point)
		}
	}
	return good, bad
}

// choose picks every parameter independently by the l/g ratio.
func (t TPE) choose(space Space, good, bad []Point, rng *rand.Rand) Point {
	pt := make(Point, len(space))
	for i, p := range space {
		gv, bv := column(good, i), column(bad, i)
		if p.Categorical() {
			pt[i] = t.chooseCategory(len(p.Values), gv, bv, rng)
			continue
		}
		a, b := p.bounds()
		for k := range gv {
			gv[k] = p.toSearch(gv[k])
		}
		for k := range bv {
			bv[k] = p.toSearch(bv[k])
		}
		l := newParzen(gv, a, b, t.PriorWeight)
		g := newParzen(bv, a, b, t.PriorWeight)
		best, bestR := 0.0, math.Inf(-1)
		for range t.Candidates {
			x := l.sample(rng)
			if r := l.logDensity(x) - g.logDensity(x); r > bestR {
				best, bestR = x, r
			}
		}
		pt[i] = p.fromSearch(best)
	}
	return pt
}

func column(pts []Point, i int) []float64 {
	out := make([]float64, len(pts))
	for k, p := range pts {
		out[k] = p[i]
	}
	return out
}

// chooseCategory draws Candidates categories from the smoothed good counts
// and returns the drawn one with the largest l/g.
func (t TPE) chooseCategory(k int, good, bad []float64, rng *rand.Rand) float64 {
	prob := func(obs []float64) []float64 {
		w := make([]float64, k)
		for c := range w {
			w[c] = t.PriorWeight
		}
		for _, v := range obs {
			w[int(v)]++
		}
		sum := t.PriorWeight*float64(k) + float64(len(obs))
		for c := range w {
			w[c] /= sum
		}
		return w
	}
	l, g := prob(good), prob(bad)
	best, bestR := 0, math.Inf(-1)
	for range t.Candidates {
		c := drawIndex(l, rng)
		if r := math.Log(l[c]) - math.Log(g[c]); r > bestR {
			best, bestR = c, r
		}
	}
	return float64(best)
}

// drawIndex draws i with probability w[i] (w sums to 1).
func drawIndex(w []float64, rng *rand.Rand) int {
	u := rng.Float64()
	for i, v := range w {
		if u < v {
			return i
		}
		u -= v
	}
	return len(w) - 1
}
