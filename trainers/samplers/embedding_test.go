package samplers

import (
	"math"
	"math/rand"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dmlbench/dmlbench/knn"
)

// line embeds the 1-D points xs as rows (x, 0).
func line(xs ...float64) knn.Matrix {
	m := knn.Matrix{Rows: len(xs), Cols: 2, Data: make([]float32, 2*len(xs))}
	for i, x := range xs {
		m.Data[2*i] = float32(x)
	}
	return m
}

func randEmb(rows, cols int, seed int64) knn.Matrix {
	rng := rand.New(rand.NewSource(seed))
	m := knn.Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

// GC on the points {0, 1, 3, 10} (one class each, K = 1, batch 3): from
// each possible first anchor, farthest-first is fixed by hand:
// 0 → 10 (d 10) → 3 (nearest anchor at 3 vs 1 for 1); 1 → 10 → 3 (4 vs 1);
// 3 → 10 (7) → 0 (3 vs 2); 10 → 0 (10) → 3 (3 vs 1).
func TestGreedyCoresetPicksFarthest(t *testing.T) {
	labels := []int32{0, 1, 2, 3}
	want := map[int][]int{0: {0, 3, 2}, 1: {1, 3, 2}, 2: {2, 3, 0}, 3: {3, 0, 2}}
	seen := map[int]bool{}
	for seed := int64(0); seed < 40; seed++ {
		s := &Coreset{K: 1}
		if err := s.Refresh(line(0, 1, 3, 10)); err != nil {
			t.Fatal(err)
		}
		bs, err := s.Batches(labels, 3, 1, rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		if !reflect.DeepEqual(b, want[b[0]]) {
			t.Fatalf("seed %d: batch %v, want %v", seed, b, want[b[0]])
		}
		seen[b[0]] = true
	}
	if len(seen) != 4 {
		t.Fatalf("first anchor not random: only %v", seen)
	}
}

// D²: after an anchor at 0, a point at 10 (d² 100) is drawn over one at 0.1
// (d² 0.01) with probability 100/100.01; the anchors never repeat.
func TestD2CoresetDrawsByDistance(t *testing.T) {
	labels := []int32{0, 1, 2}
	far := 0
	for seed := int64(0); seed < 300; seed++ {
		s := &Coreset{K: 1, D2: true}
		s.Refresh(line(0, 0.1, 10))
		bs, err := s.Batches(labels, 3, 1, rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		if b[0] == b[1] || b[1] == b[2] || b[0] == b[2] {
			t.Fatalf("repeated anchor %v", b)
		}
		if b[0] == 0 && b[1] == 2 || b[0] == 1 && b[1] == 2 {
			far++
		}
		if b[0] == 0 && b[1] == 1 || b[0] == 1 && b[1] == 0 {
			far-- // the near neighbour: should (almost) never happen
		}
	}
	if far < 150 { // ≈ 2/3 of 300 seeds start at 0 or 0.1
		t.Fatalf("D² drew the far point only %d times", far)
	}
}

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

// Every embedding-aware sampler returns full batches of distinct indices
// in which each class appears K = 2 times (GC: a multiple of 2, two anchors
// may share a class); the same seed gives the same batches.
func TestEmbeddingSamplerComposition(t *testing.T) {
	labels := labelsOf(40, 10)
	emb := randEmb(len(labels), 8, 5)
	for _, name := range []string{"ddm", "frd", "gc", "gc-d2"} {
		s, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		es := s.(EmbeddingSampler)
		if _, err := s.Batches(labels, 32, 2, rand.New(rand.NewSource(1))); err == nil {
			t.Fatalf("%s: batches without embeddings", name)
		}
		if err := es.Refresh(randEmb(5, 8, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Batches(labels, 32, 2, rand.New(rand.NewSource(1))); err == nil {
			t.Fatalf("%s: embeddings of the wrong size accepted", name)
		}
		bad := randEmb(3, 2, 1)
		bad.Data[1] = float32(math.NaN())
		if err := es.Refresh(bad); err == nil {
			t.Fatalf("%s: NaN embeddings accepted", name)
		}
		es.Refresh(emb)
		bs, err := s.Batches(labels, 32, 6, rand.New(rand.NewSource(3)))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := s.Batches(labels, 32, 6, rand.New(rand.NewSource(3)))
		if !reflect.DeepEqual(bs, again) {
			t.Fatalf("%s: same seed, different batches", name)
		}
		if len(bs) != 6 {
			t.Fatalf("%s: %d batches", name, len(bs))
		}
		for _, b := range bs {
			if len(b) != 32 {
				t.Fatalf("%s: batch of %d", name, len(b))
			}
			seen := map[int]bool{}
			count := map[int32]int{}
			for _, i := range b {
				if i < 0 || i >= len(labels) || seen[i] {
					t.Fatalf("%s: bad or repeated index %d in %v", name, i, b)
				}
				seen[i] = true
				count[labels[i]]++
			}
			for c, n := range count {
				if n%2 != 0 || (name == "ddm" || name == "frd") && n != 2 {
					t.Fatalf("%s: class %d has %d samples", name, c, n)
				}
			}
		}
		// Odd batch, tiny set: still full batches (the last class cut short,
		// items reused only when the set is exhausted).
		small := labelsOf(2, 3)
		es.Refresh(randEmb(6, 4, 2))
		bs, err = s.Batches(small, 7, 2, rand.New(rand.NewSource(1)))
		if err != nil || len(bs[0]) != 7 || len(bs[1]) != 7 {
			t.Fatalf("%s: tiny set: %v %v", name, bs, err)
		}
	}
}
