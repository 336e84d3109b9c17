package regularizers

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/internal/testutil"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
)

// fixedMiner returns preset triplets (gradients of tuple losses are defined
// for fixed tuples).
type fixedMiner struct{ t miners.Triplets }

func (fixedMiner) Name() string                                        { return "fixed" }
func (f fixedMiner) Mine([]float32, []int, *rand.Rand) miners.Triplets { return f.t }

// firstMiner mines, deterministically from the labels only, one triplet per
// anchor: its first positive and its first negative in index order.
type firstMiner struct{}

func (firstMiner) Name() string { return "first" }
func (firstMiner) Mine(_ []float32, labels []int, _ *rand.Rand) miners.Triplets {
	var t miners.Triplets
	for a, y := range labels {
		p, n := -1, -1
		for j, yj := range labels {
			if j != a && yj == y && p < 0 {
				p = j
			}
			if yj != y && n < 0 {
				n = j
			}
		}
		if p >= 0 && n >= 0 {
			t.A, t.P, t.N = append(t.A, int32(a)), append(t.P, int32(p)), append(t.N, int32(n))
		}
	}
	return t
}

// randomBatch draws B×D normal embeddings (unit rows when unit) with labels
// i mod C.
func randomBatch(seed int64, B, D, C int, unit bool) losses.Batch {
	rng := rand.New(rand.NewSource(seed))
	b := losses.Batch{Emb: make([]float32, B*D), Labels: make([]int, B), B: B, D: D}
	for i := 0; i < B; i++ {
		row := b.Emb[i*D : (i+1)*D]
		var n float64
		for k := range row {
			row[k] = float32(rng.NormFloat64())
			n += float64(row[k]) * float64(row[k])
		}
		if unit {
			for k := range row {
				row[k] = float32(float64(row[k]) / math.Sqrt(n))
			}
		}
		b.Labels[i] = i % C
	}
	return b
}

func newLoss(t *testing.T, name string, c losses.Config) losses.Loss {
	t.Helper()
	l, err := losses.New(name, c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// compareGrad is the shared finite-difference verdict.
var compareGrad = testutil.CompareGrad

// fdCheck compares the analytic dL/dE of f (which writes it into grad and
// returns L) with central differences over every entry of b.Emb.
func fdCheck(t *testing.T, what string, b losses.Batch, f func(b losses.Batch, grad []float32) float64, tol float64) {
	t.Helper()
	grad := make([]float32, len(b.Emb))
	f(b, grad)
	ana := make([]float64, len(grad))
	for i, g := range grad {
		ana[i] = float64(g)
	}
	num := make([]float64, len(grad))
	scratch := make([]float32, len(grad))
	const h = 1e-3
	for i := range num {
		orig := b.Emb[i]
		plus, minus := orig+h, orig-h
		b.Emb[i] = plus
		lp := f(b, scratch)
		b.Emb[i] = minus
		lm := f(b, scratch)
		b.Emb[i] = orig
		num[i] = (lp - lm) / (float64(plus) - float64(minus))
	}
	compareGrad(t, what, ana, num, tol)
}
