package losses

import (
	"math"
	"testing"
)

func init() {
	rs := 0.0
	for _, rq := range refRanks() {
		for _, k := range []float64{1, 2, 4, 8, 16} {
			rs += sigmoid(k-1-rq) / 20 // |P_q| = 1 = min(k, |P_q|), no clip
		}
	}
	addCases("recallk", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 1e-5, 49},
			{Config{Hyper: map[string]float64{"tau1": 0.5, "tau2": 0.2, "k_max": 4}}, 0, 50},
		},
		ref: []refCase{
			{"recallk", Config{}, nil, 1 - rs},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"tau2": 0}},
			{Hyper: map[string]float64{"k_max": 0}},
		},
	})
}

// rsNumerator is Σ_{x∈P_q} σ_{τ₁}(k − 1 − Σ_{z∉{q,x}} σ_{τ₂}(s_qz − s_qx)),
// written as plain loops (Patel et al. 2024 eq. 5 before the clip).
func rsNumerator(b Batch, q, k int, tau1, tau2 float64) float64 {
	S := batchCos(b)
	B := b.B
	v := 0.0
	for x := 0; x < B; x++ {
		if x == q || b.Labels[x] != b.Labels[q] {
			continue
		}
		rank := 0.0
		for z := 0; z < B; z++ {
			if z != q && z != x {
				rank += sigmoid((S[q*B+z] - S[q*B+x]) / tau2)
			}
		}
		v += sigmoid((float64(k) - 1 - rank) / tau1)
	}
	return v
}

// rsLoss and apLoss are loop implementations of RS@k (Patel et al. 2024 eqs. 5–7
// with the min(k, |P_q|) division and clip) and Smooth-AP.
func rsLoss(b Batch, ks []int, tau1, tau2 float64) float64 {
	L, nq := 0.0, 0
	for q := 0; q < b.B; q++ {
		np := 0
		for x := 0; x < b.B; x++ {
			if x != q && b.Labels[x] == b.Labels[q] {
				np++
			}
		}
		if np == 0 {
			continue
		}
		nq++
		for _, k := range ks {
			L += (1 - min(rsNumerator(b, q, k, tau1, tau2), float64(k))/float64(min(k, np))) / float64(len(ks))
		}
	}
	return L / float64(nq)
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

// TestRecallKMatchesLoops compares RS@k with the loop implementation rsLoss
// on random batches with several positives per query, a query without
// positives, and the clip active.
func TestRecallKMatchesLoops(t *testing.T) {
	for seed := int64(0); seed < 4; seed++ {
		b := randomBatch(seed, 13, 6, 3)
		b.Labels[12] = 7 // a query without positives
		for _, c := range []struct{ tau1, tau2 float64 }{{1, 0.01}, {5, 0.3}, {0.3, 0.05}} {
			l := newLoss(t, "recallk", Config{Hyper: map[string]float64{"tau1": c.tau1, "tau2": c.tau2, "k_max": 4}})
			got, err := l.Forward(b, make([]float32, b.B*b.D))
			if err != nil {
				t.Fatal(err)
			}
			if want := rsLoss(b, []int{1, 2, 4}, c.tau1, c.tau2); math.Abs(got-want) > 1e-9 {
				t.Errorf("seed %d τ %v: RS@k = %.12g, loops %.12g", seed, c, got, want)
			}
		}
	}
}
