package losses

import (
	"fmt"
	"math/rand"
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

// gradCase is one TestGradients case: the loss's configuration (Dim and
// Seed are set by the test; NumClasses, when needed, by the case), the
// finite-difference step (0: gradCheck's 1e-3) and the seed of the random
// batch of gradB samples of gradC classes in gradD dimensions.
type gradCase struct {
	cfg   Config
	h     float32
	batch int64
}

// The shape of TestGradients' random batches.
const gradB, gradD, gradC = 8, 5, 3

// TestGradients checks every loss's gradCases: the analytic dL/dE and dL/dθ
// against central finite differences, with the triplets of tuple losses
// fixed (fixedTriplets).
func TestGradients(t *testing.T) {
	for _, name := range caseNames() {
		for ci, tc := range casesOf[name].grad {
			t.Run(fmt.Sprintf("%s/%d", name, ci), func(t *testing.T) {
				tc.cfg.Dim = gradD
				tc.cfg.Seed = 7
				l := newLoss(t, name, tc.cfg)
				if tl, ok := l.(interface{ setMiner(miners.Miner) }); ok {
					tl.setMiner(fixedMiner{fixedTriplets})
				}
				b := randomBatch(tc.batch, gradB, gradD, gradC)
				if tc.h == 0 {
					gradCheck(t, l, b, 3)
				} else {
					gradCheckStep(t, l, b, 3, tc.h)
				}
			})
		}
	}
}
