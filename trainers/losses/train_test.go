package losses

import (
	"math"
	"math/rand"
	"testing"
	"time"
)

// Synthetic open-set data: 20 Gaussian classes in 32-d. Class identity lives
// in 8 signal dimensions (class means N(0, 1), within-class σ = 0.3); the
// other 24 dimensions are shared nuisance noise (σ = 1.5). A random linear
// embedding mixes the nuisance in, so held-out retrieval is poor; a trained
// one must learn to suppress it, which transfers to unseen classes.
const (
	synthIn, synthSignal, synthOut = 32, 8, 16
	synthClasses, synthTrain       = 20, 10
)

type synth struct {
	means [][]float64
	rng   *rand.Rand
}

func newSynth(seed int64) *synth {
	s := &synth{rng: rand.New(rand.NewSource(seed))}
	for c := 0; c < synthClasses; c++ {
		m := make([]float64, synthSignal)
		for k := range m {
			m[k] = s.rng.NormFloat64()
		}
		s.means = append(s.means, m)
	}
	return s
}

func (s *synth) sample(class int) []float64 {
	x := make([]float64, synthIn)
	for k := range x {
		if k < synthSignal {
			x[k] = s.means[class][k] + 0.3*s.rng.NormFloat64()
		} else {
			x[k] = 1.5 * s.rng.NormFloat64()
		}
	}
	return x
}

// embed computes e = W·x (W is synthOut×synthIn) for each row.
func embed(W []float64, xs [][]float64) []float32 {
	out := make([]float32, len(xs)*synthOut)
	for i, x := range xs {
		for o := 0; o < synthOut; o++ {
			s := 0.0
			for k, v := range x {
				s += W[o*synthIn+k] * v
			}
			out[i*synthOut+o] = float32(s)
		}
	}
	return out
}

// recallAt1 is the brute-force 1-NN Recall@1 (self excluded), cosine for
// sphere losses, Euclidean otherwise.
func recallAt1(e []float32, labels []int, cosine bool) float64 {
	n, d := len(labels), len(e)/len(labels)
	v := make([]float64, len(e))
	for i := 0; i < n; i++ {
		norm := 0.0
		for k := 0; k < d; k++ {
			norm += float64(e[i*d+k]) * float64(e[i*d+k])
		}
		norm = math.Sqrt(norm)
		for k := 0; k < d; k++ {
			v[i*d+k] = float64(e[i*d+k])
			if cosine {
				v[i*d+k] /= norm
			}
		}
	}
	hits := 0
	for i := 0; i < n; i++ {
		best, bestD := -1, math.Inf(1)
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			dist := 0.0
			for k := 0; k < d; k++ {
				diff := v[i*d+k] - v[j*d+k]
				dist += diff * diff
			}
			if dist < bestD {
				best, bestD = j, dist
			}
		}
		if labels[best] == labels[i] {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

// trainRecall trains W with plain gradient descent on the loss (the loss's
// Params step with lr·LRScale: Roth et al.'s absolute proxy rates are meant for
// hundreds of epochs, not this 2-second test) and returns held-out R@1 before
// and after.
func trainRecall(t *testing.T, name string, lr float64, steps int) (before, after float64) {
	t.Helper()
	info, _ := Lookup(name)
	data := newSynth(1)
	rng := rand.New(rand.NewSource(2))
	W := make([]float64, synthOut*synthIn)
	for i := range W {
		W[i] = rng.NormFloat64() / math.Sqrt(synthIn)
	}
	var testX [][]float64
	var testY []int
	for c := synthTrain; c < synthClasses; c++ {
		for k := 0; k < 20; k++ {
			testX = append(testX, data.sample(c))
			testY = append(testY, c)
		}
	}
	before = recallAt1(embed(W, testX), testY, info.Sphere)

	l := newLoss(t, name, Config{NumClasses: synthTrain, Dim: synthOut, Seed: 3})
	const perClass, classes = 4, 8
	B := perClass * classes
	grad := make([]float32, B*synthOut)
	gW := make([]float64, len(W))
	for step := 0; step < steps; step++ {
		xs := make([][]float64, 0, B)
		labels := make([]int, 0, B)
		for _, c := range rng.Perm(synthTrain)[:classes] {
			for k := 0; k < perClass; k++ {
				xs = append(xs, data.sample(c))
				labels = append(labels, c)
			}
		}
		b := Batch{Emb: embed(W, xs), Labels: labels, B: B, D: synthOut, Rng: rng}
		if _, err := l.Forward(b, grad); err != nil {
			t.Fatal(err)
		}
		clear(gW)
		for i, x := range xs {
			for o := 0; o < synthOut; o++ {
				g := float64(grad[i*synthOut+o])
				for k, v := range x {
					gW[o*synthIn+k] += g * v
				}
			}
		}
		for i := range W {
			W[i] -= lr * gW[i]
		}
		for _, p := range l.Params() {
			plr := lr
			if p.LRScale > 0 {
				plr *= p.LRScale
			}
			for i := range p.Data {
				p.Data[i] -= float32(plr * float64(p.Grad[i]))
			}
		}
	}
	after = recallAt1(embed(W, testX), testY, info.Sphere)
	return before, after
}

// TestLossesTrain trains each loss for 250 plain gradient steps at its
// trainLR on the synthetic open-set task above (batches of 8 classes × 4)
// and requires held-out R@1 to rise by at least 0.3 over the untrained
// embedding (≈ 0.38 → ≥ 0.8; the raw-embedding losses diverge at 0.3).
func TestLossesTrain(t *testing.T) {
	const steps = 250 // ≈ 0.1–0.7 s per loss here
	for _, name := range caseNames() {
		lr := casesOf[name].trainLR
		if lr == 0 {
			continue // TestEveryLossHasCases reports it unless the loss has its own tests
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			before, after := trainRecall(t, name, lr, steps)
			t.Logf("%s: held-out R@1 %.3f → %.3f after %d steps (%v)", name, before, after, steps, time.Since(start).Round(time.Millisecond))
			if after < before+0.3 {
				t.Errorf("%s did not train: R@1 %.3f → %.3f", name, before, after)
			}
		})
	}
}
