package search

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// quadSpace and quadTrue define the synthetic objective: a shifted
// quadratic bowl over two linear ranges, one log range and a categorical
// parameter; its maximum 0 is at (1.3, −2.1, 10⁻², "c").
var quadSpace = Space{
	{Name: "x", Low: -5, High: 5},
	{Name: "y", Low: -5, High: 5},
	{Name: "lr", Low: 1e-5, High: 1, Log: true},
	{Name: "kind", Values: []string{"a", "b", "c", "d"}},
}

func quadTrue(p Point) float64 {
	f := -(p[0]-1.3)*(p[0]-1.3) - (p[1]+2.1)*(p[1]+2.1)
	l := math.Log10(p[2]) + 2
	f -= l * l
	if p[3] != 2 {
		f -= 2
	}
	return f
}

// trialsToRegret runs budget trials of prop in batches of batch on the
// objective observed with Gaussian noise (σ 0.1) and returns the first
// trial count at which the best true value found is within regret of the
// maximum (budget+1 if never).
func trialsToRegret(prop Proposer, seed uint64, budget, batch int, regret float64) int {
	noise := rand.New(rand.NewPCG(seed, 99))
	var hist []Observation
	best := math.Inf(-1)
	for len(hist) < budget {
		pts := prop.Propose(quadSpace, hist, len(hist), min(batch, budget-len(hist)))
		for _, p := range pts {
			best = math.Max(best, quadTrue(p))
			hist = append(hist, Observation{Point: p, Score: quadTrue(p) + 0.1*noise.NormFloat64()})
			if best >= -regret {
				return len(hist)
			}
		}
	}
	return budget + 1
}

func TestTPEBeatsRandomOnNoisyQuadratic(t *testing.T) {
	const seeds, budget, regret = 20, 150, 1.0
	for _, batch := range []int{1, 4} {
		var sumTPE, sumRand float64
		for s := range seeds {
			sumTPE += float64(trialsToRegret(TPE{Seed: int64(s)}, uint64(s), budget, batch, regret))
			sumRand += float64(trialsToRegret(Random{Seed: int64(s)}, uint64(s), budget, batch, regret))
		}
		mt, mr := sumTPE/seeds, sumRand/seeds
		t.Logf("batch %d: mean trials to regret ≤ %g over %d seeds: TPE %.1f, random %.1f", batch, regret, seeds, mt, mr)
		if !(mt < mr) {
			t.Errorf("batch %d: TPE needs %.1f trials on average, random search %.1f: TPE should need fewer", batch, mt, mr)
		}
	}
}

func TestSameSeedSameTrials(t *testing.T) {
	run := func(p Proposer) []Point {
		var hist []Observation
		var all []Point
		for len(hist) < 30 {
			pts := p.Propose(quadSpace, hist, len(hist), 3)
			for _, q := range pts {
				hist = append(hist, Observation{Point: q, Score: quadTrue(q)})
			}
			all = append(all, pts...)
		}
		return all
	}
	for _, p := range []Proposer{TPE{Seed: 7}, Random{Seed: 7}} {
		a, b := run(p), run(p)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%T: same seed gave different trials", p)
		}
	}
	if reflect.DeepEqual(run(TPE{Seed: 7}), run(TPE{Seed: 8})) {
		t.Fatal("seeds 7 and 8 gave the same trials")
	}
	// A batch's points differ from each other (the constant liar).
	var hist []Observation
	for _, q := range (Random{Seed: 1}).Propose(quadSpace, nil, 0, 12) {
		hist = append(hist, Observation{Point: q, Score: quadTrue(q)})
	}
	batch := TPE{Seed: 1}.Propose(quadSpace, hist, 12, 4)
	for i := range batch {
		for j := range i {
			if reflect.DeepEqual(batch[i], batch[j]) {
				t.Errorf("batch points %d and %d are equal: %v", i, j, batch[i])
			}
		}
	}
}

func TestStartupIsRandom(t *testing.T) {
	r := Random{Seed: 3}.Propose(quadSpace, nil, 0, 5)
	p := TPE{Seed: 3, Startup: 5}.Propose(quadSpace, nil, 0, 5)
	if !reflect.DeepEqual(r, p) {
		t.Fatal("TPE's startup trials differ from random search's")
	}
}

func TestProposalsInRange(t *testing.T) {
	space := Space{
		{Name: "m", Low: 0, High: 1},
		{Name: "n", Low: 2, High: 9, Int: true},
		{Name: "lr", Low: 1e-5, High: 1e-2, Log: true},
	}
	var hist []Observation
	for len(hist) < 60 {
		for _, q := range (TPE{Seed: 5, Startup: 5}).Propose(space, hist, len(hist), 2) {
			if q[0] < 0 || q[0] > 1 || q[1] < 2 || q[1] > 9 || q[1] != math.Round(q[1]) || q[2] < 1e-5 || q[2] > 1e-2 {
				t.Fatalf("point %v outside the space", q)
			}
			score := -q[0]
			if len(hist)%7 == 0 {
				score = math.NaN() // failed trials count as the worst
			}
			hist = append(hist, Observation{Point: q, Score: score})
		}
	}
}

// The truncated mixture is a density on [a, b]: it integrates to 1.
func TestParzenIntegratesToOne(t *testing.T) {
	p := newParzen([]float64{0.1, 0.15, 0.9, 0.95, 0.97}, 0, 1, 1)
	const n = 20000
	var sum float64
	for i := range n {
		x := (float64(i) + 0.5) / n
		sum += math.Exp(p.logDensity(x)) / n
	}
	if math.Abs(sum-1) > 1e-3 {
		t.Fatalf("∫ density = %v, want 1", sum)
	}
}

func TestParamValidate(t *testing.T) {
	for _, c := range []struct {
		p    Param
		want string
	}{
		{Param{Name: "m", Low: 1, High: 0}, "low 1 > high 0"},
		{Param{Name: "m", Low: 1, High: 1}, "empty range"},
		{Param{Name: "lr", Low: 0, High: 1, Log: true}, "must lie above 0"},
		{Param{Name: "lr", Low: -1, High: 1, Log: true}, "must lie above 0"},
		{Param{Name: "k", Low: 0.2, High: 0.8, Int: true}, "holds no integer"},
		{Param{Name: "c", Values: []string{"a", "a"}}, "given twice"},
	} {
		err := c.p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.p, err, c.want)
		}
	}
	if err := (Param{Name: "lr", Low: 1e-5, High: 1e-2, Log: true}).Validate(); err != nil {
		t.Fatal(err)
	}
}
