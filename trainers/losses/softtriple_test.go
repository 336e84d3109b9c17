package losses

import (
	"math"
	"testing"
)

func init() {
	e := math.Exp
	// Centres (1,0), (0,1) for class 0 and (−1,0), (0,−1) for class 1:
	// S^c = softmax-weighted mean of the two centre cosines a, b.
	st := func(a, b float64) float64 { return (e(a/0.1)*a + e(b/0.1)*b) / (e(a/0.1) + e(b/0.1)) }
	ce := func(sy, so float64) float64 { // −log softmax with margin δ = 0.01, λ = 8
		return math.Log(e(8*(sy-0.01))+e(8*so)) - 8*(sy-0.01)
	}
	softTripleWant := (ce(st(1, 0), st(-1, 0)) + ce(st(0.5, s3), st(-0.5, -s3)) +
		ce(st(0, -1), st(0, 1)) + ce(st(1, 0), st(-1, 0))) / 4
	softTripleWant += 0.2 / 4 * 2 * math.Sqrt(2+1e-5) // τ/(C·K·(K−1)) · Σ √(2 + ε − 0)
	addCases("softtriple", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{NumClasses: gradC}, 0, 37},
			{Config{NumClasses: 4, Hyper: map[string]float64{"centers": 3, "gamma": 0.5, "tau": 0.7, "lambda": 3, "delta": 0.2}}, 0, 38},
		},
		ref: []refCase{
			{"softtriple", Config{NumClasses: 2, Dim: 2}, func(l Loss) {
				copy(l.Params()[0].Data, []float32{1, 0, -1, 0, 0, 1, 0, -1}) // rows k·C + c
			}, softTripleWant},
		},
		trainLR: 0.1,
		bad: []Config{
			{NumClasses: 1, Dim: 4},
			{NumClasses: 4},
			{NumClasses: 4, Dim: 4, Hyper: map[string]float64{"centers": 0}},
			{NumClasses: 4, Dim: 4, Hyper: map[string]float64{"gamma": 0}},
		},
	})
}

// TestSoftTripleBadBatch: labels outside the centre set and a wrong D are
// errors for SoftTriple.
func TestSoftTripleBadBatch(t *testing.T) {
	l := newLoss(t, "softtriple", Config{NumClasses: 3, Dim: 5})
	b := randomBatch(1, 8, 5, 3)
	b.Labels[0] = 3
	if _, err := l.Forward(b, make([]float32, 40)); err == nil {
		t.Error("softtriple: label ≥ NumClasses accepted")
	}
	b = randomBatch(1, 10, 4, 3)
	if _, err := l.Forward(b, make([]float32, 40)); err == nil {
		t.Error("softtriple: wrong D accepted")
	}
}
