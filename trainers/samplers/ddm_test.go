package samplers

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// Histogram of {0, 1, 2, 3, 4} in 4 bins of width 1 (4 in the last bin):
// counts 1, 1, 1, 2 → CDF .2 .4 .6 1; against all-zero distances (CDF 1 1 1 1)
// W₁ = .8 + .6 + .4 + 0 = 1.8.
func TestDistHistKnown(t *testing.T) {
	h := newDistHist([]float64{0, 1, 2, 3, 4}, 4)
	if !reflect.DeepEqual(h.cum, []float64{0.2, 0.4, 0.6, 1}) {
		t.Fatalf("CDF %v", h.cum)
	}
	if w := h.w1([]float64{0, 0, 0}); math.Abs(w-1.8) > 1e-12 {
		t.Fatalf("W1 = %v", w)
	}
	if w := h.w1([]float64{0, 1, 2, 3, 4}); w != 0 {
		t.Fatalf("W1 to itself = %v", w)
	}
}

// DDM on A = {0, 1} and B = {10, 13}: reference distances 1, 3, 9, 10, 12,
// 13 in 12 bins of width 1 over [1, 13]. A's distance 1 (bin 0) gives
// W₁ = 41/6, B's distance 3 (bin 2) W₁ = 33/6, so every batch is B.
func TestDDMPicksCloserHistogram(t *testing.T) {
	emb := line(0, 1, 10, 13)
	labels := []int32{0, 0, 1, 1}
	h := newDistHist(pairDists(emb, []int{0, 1, 2, 3}), 12)
	if a, b := h.w1(pairDists(emb, []int{0, 1})), h.w1(pairDists(emb, []int{2, 3})); math.Abs(a-41.0/6) > 1e-9 || math.Abs(b-33.0/6) > 1e-9 {
		t.Fatalf("W1(A) = %v, W1(B) = %v", a, b)
	}
	s := &DDM{Candidates: 20, Bins: 12}
	s.Refresh(emb)
	bs, err := s.Batches(labels, 2, 10, rand.New(rand.NewSource(2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if labels[b[0]] != 1 || labels[b[1]] != 1 {
			t.Fatalf("DDM chose %v, want class B", b)
		}
	}
}
