package losses

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/internal/testutil"
	"github.com/dmlbench/dmlbench/trainers/miners"
)

// fixedMiner returns preset triplets: the gradient of a tuple loss is only
// defined for fixed tuples, so gradient checks bypass stochastic mining.
type fixedMiner struct{ t miners.Triplets }

func (fixedMiner) Name() string                                        { return "fixed" }
func (f fixedMiner) Mine([]float32, []int, *rand.Rand) miners.Triplets { return f.t }

// randomBatch draws B×D standard normal embeddings with labels i mod C.
func randomBatch(seed int64, B, D, C int) Batch {
	rng := rand.New(rand.NewSource(seed))
	b := Batch{Emb: make([]float32, B*D), Labels: make([]int, B), B: B, D: D}
	for i := range b.Emb {
		b.Emb[i] = float32(rng.NormFloat64())
	}
	for i := range b.Labels {
		b.Labels[i] = i % C
	}
	return b
}

// fixedTriplets are 10 valid triplets (more than B = 8, so the tuple
// capacity grows to 2B) for labels i mod 3.
var fixedTriplets = miners.Triplets{
	A: []int32{0, 1, 2, 3, 4, 5, 6, 7, 0, 4},
	P: []int32{3, 4, 5, 6, 7, 2, 0, 1, 6, 1},
	N: []int32{1, 2, 0, 5, 3, 7, 4, 6, 2, 5},
}

// lossAt evaluates l with a fresh rng of the given seed (so internal random
// choices such as N-pair's positives repeat).
func lossAt(t *testing.T, l Loss, b Batch, seed int64) float64 {
	t.Helper()
	b.Rng = rand.New(rand.NewSource(seed))
	v, err := l.Forward(b, make([]float32, b.B*b.D))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fdGrad is the central finite difference of l with respect to x[i] (a
// float32 embedding or parameter entry), divided by the step actually taken
// after rounding to float32.
func fdGrad(t *testing.T, l Loss, b Batch, x []float32, i int, seed int64) float64 {
	const h = 1e-3
	orig := x[i]
	plus, minus := orig+h, orig-h
	x[i] = plus
	lp := lossAt(t, l, b, seed)
	x[i] = minus
	lm := lossAt(t, l, b, seed)
	x[i] = orig
	return (lp - lm) / (float64(plus) - float64(minus))
}

// compareGrad is the shared finite-difference verdict.
var compareGrad = testutil.CompareGrad

// gradCheck compares dL/dE and every dL/dθ with finite differences.
func gradCheck(t *testing.T, l Loss, b Batch, seed int64) {
	t.Helper()
	b.Rng = rand.New(rand.NewSource(seed))
	grad := make([]float32, b.B*b.D)
	if _, err := l.Forward(b, grad); err != nil {
		t.Fatal(err)
	}
	ana := make([]float64, len(grad))
	for i, g := range grad {
		ana[i] = float64(g)
	}
	var pAna [][]float64
	for _, p := range l.Params() {
		g := make([]float64, len(p.Grad))
		for i, v := range p.Grad {
			g[i] = float64(v)
		}
		pAna = append(pAna, g)
	}
	num := make([]float64, len(grad))
	for i := range num {
		num[i] = fdGrad(t, l, b, b.Emb, i, seed)
	}
	const tol = 1e-4
	compareGrad(t, l.Name()+" dL/dE", ana, num, tol)
	for k, p := range l.Params() {
		num := make([]float64, len(p.Data))
		for i := range num {
			num[i] = fdGrad(t, l, b, p.Data, i, seed)
		}
		compareGrad(t, fmt.Sprintf("%s dL/d%s", l.Name(), p.Name), pAna[k], num, tol)
	}
}

// newLoss builds a registered loss or fails the test.
func newLoss(t testing.TB, name string, c Config) Loss {
	t.Helper()
	l, err := New(name, c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// gradCheckStep is gradCheck with a chosen finite-difference step h: the
// sharp sigmoids of RS@k and Smooth-AP at their default temperature 0.01
// (curvature ~1/τ³) and the 65-bin histogram (kinks every 1/32) need
// h ≈ 1e-5; the loss is evaluated in float64, and the step actually taken is
// measured after rounding to float32, so a small h stays accurate.
func gradCheckStep(t *testing.T, l Loss, b Batch, seed int64, h float32) {
	t.Helper()
	fd := func(x []float32, i int) float64 {
		orig := x[i]
		plus, minus := orig+h, orig-h
		x[i] = plus
		lp := lossAt(t, l, b, seed)
		x[i] = minus
		lm := lossAt(t, l, b, seed)
		x[i] = orig
		return (lp - lm) / (float64(plus) - float64(minus))
	}
	b.Rng = rand.New(rand.NewSource(seed))
	grad := make([]float32, b.B*b.D)
	if _, err := l.Forward(b, grad); err != nil {
		t.Fatal(err)
	}
	ana, num := make([]float64, len(grad)), make([]float64, len(grad))
	for i, g := range grad {
		ana[i], num[i] = float64(g), fd(b.Emb, i)
	}
	compareGrad(t, l.Name()+" dL/dE", ana, num, 1e-4)
	for _, p := range l.Params() {
		ana := make([]float64, len(p.Grad))
		num := make([]float64, len(p.Data))
		for i := range num {
			ana[i] = float64(p.Grad[i])
		}
		for i := range num {
			num[i] = fd(p.Data, i)
		}
		compareGrad(t, fmt.Sprintf("%s dL/d%s", l.Name(), p.Name), ana, num, 1e-4)
	}
}

// gradCase is one TestGradients case: the loss, its configuration (Dim and
// Seed are set by the test; NumClasses, when needed, by the case) and the
// finite-difference step (0: gradCheck's 1e-3).
type gradCase struct {
	name string
	cfg  Config
	h    float32
}

// moreGradCases are the gradient cases of losses whose tests live in their
// own file (docs/extending.md): that file's init appends to it.
var moreGradCases []gradCase

func TestGradients(t *testing.T) {
	const B, D, C = 8, 5, 3
	cases := []gradCase{
		{"contrastive", Config{}, 0},
		{"contrastive", Config{Hyper: map[string]float64{"margin": 1.5, "pos_margin": 0.1}}, 0},
		{"triplet", Config{}, 0},
		{"triplet", Config{Hyper: map[string]float64{"margin": 0.5, "avg_nonzero": 1}}, 0},
		{"margin", Config{}, 0},
		{"margin", Config{NumClasses: C, Hyper: map[string]float64{"beta": 0.9, "class_beta": 1}}, 0},
		{"multisimilarity", Config{}, 0},
		{"multisimilarity", Config{Hyper: map[string]float64{"alpha": 1.5, "beta": 10, "lambda": 0.2, "epsilon": 0.5}}, 0},
		{"npair", Config{}, 0},
		{"npair", Config{Hyper: map[string]float64{"nu": 0.3}}, 0},
		{"proxynca", Config{NumClasses: C}, 0},
		{"proxynca", Config{NumClasses: 4, Hyper: map[string]float64{"scale": 1.5}}, 0},
		{"normsoftmax", Config{NumClasses: C}, 0},
		{"normsoftmax", Config{NumClasses: 4, Hyper: map[string]float64{"temperature": 0.5}}, 0},
		{"arcface", Config{NumClasses: C}, 0},
		{"arcface", Config{NumClasses: 4, Hyper: map[string]float64{"scale": 4, "margin": 0.3}}, 0},
		{"angular", Config{}, 0},
		{"angular", Config{Hyper: map[string]float64{"alpha": 0.6, "lambda": 0.5, "nu": 0.1}}, 0},
		{"genlifted", Config{}, 0},
		{"genlifted", Config{Hyper: map[string]float64{"margin": 2.5, "nu": 0.2}}, 0},
		{"histogram", Config{}, 1e-5},
		{"histogram", Config{Hyper: map[string]float64{"bins": 5}}, 0},
		{"quadruplet", Config{}, 0},
		{"quadruplet", Config{Hyper: map[string]float64{"margin1": 0.3, "margin2": 1.5}}, 0},
		{"snr", Config{}, 0},
		{"snr", Config{Hyper: map[string]float64{"margin": 2, "lambda": 0.3}}, 0},
		{"softtriple", Config{NumClasses: C}, 0},
		{"softtriple", Config{NumClasses: 4, Hyper: map[string]float64{"centers": 3, "gamma": 0.5, "tau": 0.7, "lambda": 3, "delta": 0.2}}, 0},
		{"lifted", Config{}, 0},
		{"lifted", Config{Hyper: map[string]float64{"margin": 3}}, 0},
		{"proxytriplet", Config{NumClasses: C}, 0},
		{"proxytriplet", Config{NumClasses: 5, Hyper: map[string]float64{"margin": 0.3}}, 0},
		{"prototypical", Config{}, 0},
		{"prototypical", Config{Hyper: map[string]float64{"support": 0.7}}, 0},
		{"rankedlist", Config{}, 0},
		{"rankedlist", Config{Hyper: map[string]float64{"alpha": 1.6, "margin": 0.2, "temperature": 3, "lambda": 0.5}}, 0},
		{"structclust", Config{}, 0},
		{"structclust", Config{Hyper: map[string]float64{"margin_mult": 3, "pam_iters": 0}}, 0},
		{"recallk", Config{}, 1e-5},
		{"recallk", Config{Hyper: map[string]float64{"tau1": 0.5, "tau2": 0.2, "k_max": 4}}, 0},
		{"smoothap", Config{}, 1e-5},
		{"smoothap", Config{Hyper: map[string]float64{"tau": 0.2}}, 0},
	}
	cases = append(cases, moreGradCases...)
	for ci, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.name, ci), func(t *testing.T) {
			tc.cfg.Dim = D
			tc.cfg.Seed = 7
			l := newLoss(t, tc.name, tc.cfg)
			if tl, ok := l.(interface{ setMiner(miners.Miner) }); ok {
				tl.setMiner(fixedMiner{fixedTriplets})
			}
			b := randomBatch(int64(11+ci), B, D, C)
			if tc.h == 0 {
				gradCheck(t, l, b, 3)
			} else {
				gradCheckStep(t, l, b, 3, tc.h)
			}
		})
	}
	// Every registered loss that trains without a teacher is checked.
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.name] = true
	}
	for _, info := range All() {
		if !covered[info.Name] && !info.Teacher && !strings.HasPrefix(info.Name, "mpn") {
			t.Errorf("%s has no gradient check", info.Name)
		}
	}
}

// TestRecallKClipGradient checks RS@k where the numerator clip min(·, k) is
// active: 6 positives per query and a flat rank sigmoid (τ₁ = 5) make the
// smoothed count of positives in the top 1 and 2 exceed k.
func TestRecallKClipGradient(t *testing.T) {
	l := newLoss(t, "recallk", Config{Hyper: map[string]float64{"tau1": 5, "tau2": 0.3, "k_max": 8}})
	b := randomBatch(21, 14, 4, 2)
	// Count queries/k where the clip binds, with an independent evaluation.
	clipped := 0
	for _, k := range []int{1, 2, 4, 8} {
		for q := 0; q < b.B; q++ {
			if v := rsNumerator(b, q, k, 5, 0.3); v > float64(k) {
				clipped++
			}
		}
	}
	if clipped == 0 {
		t.Fatal("test batch never activates the clip")
	}
	t.Logf("clip active for %d (query, k) pairs", clipped)
	gradCheck(t, l, b, 1)
}

// TestStructClustInference compares the greedy + PAM loss-augmented
// inference with brute force over all medoid sets on small random batches:
// the approximation may fall short of the maximum but never exceeds it, and
// here (well-behaved 3-class batches) it usually reaches it.
func TestStructClustInference(t *testing.T) {
	exact := 0
	for seed := int64(0); seed < 20; seed++ {
		b := randomBatch(seed, 7, 3, 3)
		y, K := denseLabels(b.Labels)
		u := unitRows(b.Emb, b.B, b.D)
		d := make([]float64, b.B*b.B)
		for i := range b.B {
			for j := range b.B {
				s := 0.0
				for m := range b.D {
					s += (u[i*b.D+m] - u[j*b.D+m]) * (u[i*b.D+m] - u[j*b.D+m])
				}
				d[i*b.B+j] = math.Sqrt(s + sqrtEps)
			}
		}
		f := facility{d: d, B: b.B, y: y, K: K, gamma: 1}
		med := f.greedy()
		for range 5 {
			med = f.refine(med)
		}
		got := f.augmented(med)
		best := math.Inf(-1)
		for i := range b.B {
			for j := range b.B {
				for k := range b.B {
					if i != j && j != k && i != k {
						best = max(best, f.augmented([]int{i, j, k}))
					}
				}
			}
		}
		if got > best+1e-12 {
			t.Fatalf("seed %d: inference %v above the exact maximum %v", seed, got, best)
		}
		if got > best-1e-12 {
			exact++
		}
	}
	t.Logf("greedy + PAM reached the exact maximum in %d of 20 batches", exact)
	if exact < 10 {
		t.Errorf("greedy + PAM reached the exact maximum only %d of 20 times", exact)
	}
}
