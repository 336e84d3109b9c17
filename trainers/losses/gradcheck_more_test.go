package losses

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/miners"
)

// Finite-difference gradient checks of the losses added from seed 000 §A.1
// (angular, genlifted, histogram, quadruplet, snr, softtriple), seed 002
// (lifted, proxytriplet, prototypical, rankedlist, structclust) and seed 004
// (recallk, smoothap): dL/dE and every Param, with the tuples fixed.

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

func TestGradientsMore(t *testing.T) {
	const B, D, C = 8, 5, 3
	cases := []struct {
		name string
		cfg  Config
		h    float32 // 0: gradCheck's step 1e-3
	}{
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
