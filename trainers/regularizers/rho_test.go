package regularizers

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
)

func TestRhoSwapProbability(t *testing.T) {
	const B, C, p, calls = 40, 8, 0.3, 200
	labels := make([]int, B)
	for i := range labels {
		labels[i] = i % C
	}
	inner := firstMiner{}
	orig := inner.Mine(nil, labels, nil)
	r, err := NewRho(inner, p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	mined, switched := 0, 0
	for c := 0; c < calls; c++ {
		tr := r.Mine(nil, labels, rng)
		mined += tr.Len()
		for i := range tr.A {
			a, pp, n := tr.A[i], tr.P[i], tr.N[i]
			if a != orig.A[i] {
				t.Fatal("the anchor changed")
			}
			if pp == a { // switched: (a, a, p′), p′ a positive of a
				switched++
				if n == a || labels[n] != labels[a] {
					t.Fatalf("switched tuple (%d, %d, %d): negative is not a positive of the anchor", a, pp, n)
				}
			} else if pp != orig.P[i] || n != orig.N[i] {
				t.Fatalf("unswitched tuple %d changed", i)
			}
		}
		if r.Switched > r.Mined {
			t.Fatal("counters inconsistent")
		}
	}
	frac := float64(switched) / float64(mined)
	sd := math.Sqrt(p * (1 - p) / float64(mined))
	t.Logf("switched %d of %d tuples: %.4f (p = %.2f, σ = %.4f)", switched, mined, frac, p, sd)
	if math.Abs(frac-p) > 4*sd {
		t.Fatalf("switch rate %.4f, want %.2f ± %.4f", frac, p, 4*sd)
	}
}

func TestRhoZeroIsInnerMiner(t *testing.T) {
	labels := []int{0, 1, 0, 1, 2, 2}
	r, _ := NewRho(firstMiner{}, 0)
	rng := rand.New(rand.NewSource(3))
	ref := rand.New(rand.NewSource(3))
	got, want := r.Mine(nil, labels, rng), firstMiner{}.Mine(nil, labels, nil)
	for i := range want.A {
		if got.A[i] != want.A[i] || got.P[i] != want.P[i] || got.N[i] != want.N[i] {
			t.Fatal("p = 0 changed the tuples")
		}
	}
	if rng.Int63() != ref.Int63() {
		t.Fatal("p = 0 consumed random numbers (the baseline's stream would shift)")
	}
	// The inner miner's slices are not modified in place.
	fixed := fixedMiner{miners.Triplets{A: []int32{0}, P: []int32{2}, N: []int32{1}}}
	r1, _ := NewRho(fixed, 1)
	r1.Mine(nil, labels, rng)
	if fixed.t.P[0] != 2 || fixed.t.N[0] != 1 {
		t.Fatal("Rho modified the inner miner's triplets")
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := NewRho(fixed, bad); err == nil {
			t.Fatalf("p_switch %v accepted", bad)
		}
	}
}

func TestWrapOnlyTupleLosses(t *testing.T) {
	for _, name := range []string{"contrastive", "triplet", "margin", "snr", "quadruplet"} {
		if err := Wrap(newLoss(t, name, losses.Config{Dim: 4}), 0.2); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"multisimilarity", "recallk", "npair"} {
		err := Wrap(newLoss(t, name, losses.Config{Dim: 4, NumClasses: 3}), 0.2)
		if err == nil || !strings.Contains(err.Error(), "does not mine tuples") {
			t.Fatalf("%s: got %v, want a 'does not mine tuples' error", name, err)
		}
	}
	if err := Wrap(newLoss(t, "margin", losses.Config{Dim: 4}), 2); err == nil {
		t.Fatal("p_switch 2 accepted")
	}
}

// TestRhoLossGradients checks R-losses on switched tuples (a, a, p′): the
// loss accepts them and dL/dE (with the zero-distance positive) matches
// finite differences.
func TestRhoLossGradients(t *testing.T) {
	const B, D, C = 9, 5, 3
	for _, name := range []string{"contrastive", "triplet", "margin", "snr"} {
		t.Run(name, func(t *testing.T) {
			l := newLoss(t, name, losses.Config{Dim: D})
			mw := l.(losses.MinerWrapper)
			mw.WrapMiner(func(miners.Miner) miners.Miner { r, _ := NewRho(firstMiner{}, 0.5); return r })
			b := randomBatch(5, B, D, C, false)
			f := func(b losses.Batch, grad []float32) float64 {
				b.Rng = rand.New(rand.NewSource(2)) // same switches every evaluation
				v, err := l.Forward(b, grad)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			fdCheck(t, "R-"+name, b, f, 1e-3)
		})
	}
}
