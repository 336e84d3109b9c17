package samplers

import (
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// FD of N((0,0), diag(1,4)) and N((1,0), diag(4,1)):
// 1 + 5 + 5 − 2(√4 + √4) = 3; and 0 between a full covariance and itself.
func TestFrechetFormula(t *testing.T) {
	g, err := gaussFrom([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 4}))
	if err != nil {
		t.Fatal(err)
	}
	if fd := g.frechetTo([]float64{1, 0}, mat.NewSymDense(2, []float64{4, 0, 0, 1})); math.Abs(fd-3) > 1e-9 {
		t.Fatalf("FD = %v, want 3", fd)
	}
	full := mat.NewSymDense(3, []float64{2, 0.5, 0.3, 0.5, 1, -0.2, 0.3, -0.2, 1.5})
	g, _ = gaussFrom([]float64{1, 2, 3}, full)
	if fd := g.frechetTo([]float64{1, 2, 3}, full); math.Abs(fd) > 1e-9 {
		t.Fatalf("FD to itself = %v", fd)
	}
}

// FRD on class A = {−1, 1} and B = {4, 8} (batch 2, K = 2: a candidate is
// one class). The reference is all four points: μ = 3, σ² = 46/3. By hand
// FD(A) = 9 + 46/3 + 2 − 2√(92/3) ≈ 15.26 and FD(B) = 9 + 46/3 + 8 −
// 2√(368/3) ≈ 10.18, so every batch is B.
func TestFRDPicksCloserGaussian(t *testing.T) {
	emb := line(-1, 1, 4, 8)
	labels := []int32{0, 0, 1, 1}
	g, _ := newGaussRef(emb, []int{0, 1, 2, 3})
	if a, b := g.frechet(emb, []int{0, 1}), g.frechet(emb, []int{2, 3}); math.Abs(a-(9+46.0/3+2-2*math.Sqrt(92.0/3))) > 1e-9 ||
		math.Abs(b-(9+46.0/3+8-2*math.Sqrt(368.0/3))) > 1e-9 {
		t.Fatalf("FD(A) = %v, FD(B) = %v", a, b)
	}
	s := &FRD{Candidates: 20}
	s.Refresh(emb)
	bs, err := s.Batches(labels, 2, 10, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if labels[b[0]] != 1 || labels[b[1]] != 1 {
			t.Fatalf("FRD chose %v, want class B", b)
		}
	}
}
