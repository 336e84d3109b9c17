package miners

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// symmetric builds a B×B distance matrix from the upper triangle given row by
// row (entries (0,1),(0,2),…,(1,2),…).
func symmetric(b int, upper ...float32) []float32 {
	d := make([]float32, b*b)
	k := 0
	for i := 0; i < b; i++ {
		for j := i + 1; j < b; j++ {
			d[i*b+j], d[j*b+i] = upper[k], upper[k]
			k++
		}
	}
	return d
}

// checkValid asserts every triplet is (anchor, positive, negative) with a ≠ p.
func checkValid(t *testing.T, tr Triplets, labels []int) {
	t.Helper()
	if len(tr.P) != tr.Len() || len(tr.N) != tr.Len() {
		t.Fatalf("ragged triplets %d/%d/%d", len(tr.A), len(tr.P), len(tr.N))
	}
	for i := range tr.A {
		a, p, n := tr.A[i], tr.P[i], tr.N[i]
		if a == p || labels[a] != labels[p] || labels[a] == labels[n] {
			t.Fatalf("invalid triplet %d: (%d,%d,%d) labels (%d,%d,%d)", i, a, p, n, labels[a], labels[p], labels[n])
		}
	}
}

// Six points, three classes of two, so every anchor has exactly one positive.
var (
	labels6 = []int{0, 0, 1, 1, 2, 2}
	//                 (0,1) (0,2) (0,3) (0,4) (0,5) (1,2) (1,3) (1,4) (1,5) (2,3) (2,4) (2,5) (3,4) (3,5) (4,5)
	dist6 = symmetric(6, 0.50, 0.60, 0.90, 0.40, 1.20, 0.80, 0.30, 1.00, 0.65, 0.20, 0.75, 0.15, 0.95, 1.10, 0.70)
)

func TestBatchHardExact(t *testing.T) {
	got := BatchHard{}.Mine(dist6, labels6, nil)
	// Per anchor: the only positive; the negative with the smallest distance.
	// row 0: negs 2:.60 3:.90 4:.40 5:1.20 → 4
	// row 1: negs 2:.80 3:.30 4:1.00 5:.65 → 3
	// row 2: negs 0:.60 1:.80 4:.75 5:.15 → 5
	// row 3: negs 0:.90 1:.30 4:.95 5:1.10 → 1
	// row 4: negs 0:.40 1:1.00 2:.75 3:.95 → 0
	// row 5: negs 0:1.20 1:.65 2:.15 3:1.10 → 2
	want := Triplets{A: []int32{0, 1, 2, 3, 4, 5}, P: []int32{1, 0, 3, 2, 5, 4}, N: []int32{4, 3, 5, 1, 0, 2}}
	equal(t, got, want)
}

func TestBatchHardHardestPositiveAndTies(t *testing.T) {
	labels := []int{0, 0, 0, 1}
	// (0,1)=.5 (0,2)=.5 tie → lower index 1; (1,2)=.9
	d := symmetric(4, 0.5, 0.5, 2, 0.9, 1, 1)
	got := BatchHard{}.Mine(d, labels, nil)
	want := Triplets{A: []int32{0, 1, 2, 3}[:3], P: []int32{1, 2, 1}, N: []int32{3, 3, 3}}
	equal(t, got, want)
}

func TestSemihardExact(t *testing.T) {
	m := &Semihard{Margin: 0.2}
	rng := rand.New(rand.NewSource(1))
	// row 0: d(0,1)=.50; semi-hard (.50,.70): 2:.60 only → 2
	// row 1: d(1,0)=.50; (.50,.70): 5:.65 only → 5
	// row 2: d(2,3)=.20; (.20,.40): none (0:.60 1:.80 4:.75 5:.15) → random negative
	// row 3: d(3,2)=.20; (.20,.40): 1:.30 only → 1
	// row 4: d(4,5)=.70; (.70,.90): 2:.75 only → 2
	// row 5: d(5,4)=.70; (.70,.90): none (0:1.2 1:.65 2:.15 3:1.1) → random
	for rep := 0; rep < 50; rep++ {
		got := m.Mine(dist6, labels6, rng)
		checkValid(t, got, labels6)
		if got.Len() != 6 {
			t.Fatalf("got %d triplets", got.Len())
		}
		for i, want := range map[int]int32{0: 2, 1: 5, 3: 1, 4: 2} {
			if got.N[i] != want {
				t.Fatalf("anchor %d: negative %d, want %d", i, got.N[i], want)
			}
		}
	}
	// The upper bound matters: with a large margin row 0 also admits 3 (.90).
	m.SetMargin(0.45)
	seen := map[int32]bool{}
	for rep := 0; rep < 200; rep++ {
		seen[m.Mine(dist6, labels6, rng).N[0]] = true
	}
	if len(seen) != 2 || !seen[2] || !seen[3] {
		t.Fatalf("margin 0.45, anchor 0 negatives %v, want {2,3}", seen)
	}
}

func TestSoftHardSets(t *testing.T) {
	labels := []int{0, 0, 0, 1, 1}
	// (0,1)=.3 (0,2)=.9 (0,3)=.5 (0,4)=1.5 (1,2)=.4 (1,3)=.6 (1,4)=.2 (2,3)=1 (2,4)=.7 (3,4)=.8
	d := symmetric(5, 0.3, 0.9, 0.5, 1.5, 0.4, 0.6, 0.2, 1.0, 0.7, 0.8)
	// anchor 0: pos {1:.3, 2:.9}, neg {3:.5, 4:1.5}; min neg .5 → hard pos {2};
	//           max pos .9 → hard neg {3}.
	// anchor 1: pos {0:.3, 2:.4}, neg {3:.6, 4:.2}: min neg .2 → hard pos {0,2};
	//           max pos .4 → hard neg {4}.
	// anchor 3: pos {4:.8}, neg {0:.5,1:.6,2:1}: min neg .5 → {4}; max pos .8 → {0,1}.
	rng := rand.New(rand.NewSource(2))
	seenP1 := map[int32]bool{}
	seenN3 := map[int32]bool{}
	for rep := 0; rep < 200; rep++ {
		got := Softhard{}.Mine(d, labels, rng)
		checkValid(t, got, labels)
		if got.P[0] != 2 || got.N[0] != 3 || got.N[1] != 4 || got.P[3] != 4 {
			t.Fatalf("rep %d: %+v", rep, got)
		}
		seenP1[got.P[1]] = true
		seenN3[got.N[3]] = true
	}
	if len(seenP1) != 2 || len(seenN3) != 2 || seenN3[2] {
		t.Fatalf("anchor 1 positives %v (want {0,2}), anchor 3 negatives %v (want {0,1})", seenP1, seenN3)
	}
}

func TestRandomUniform(t *testing.T) {
	labels := []int{0, 0, 0, 0, 1, 1, 2}
	d := make([]float32, 49)
	rng := rand.New(rand.NewSource(3))
	const n = 6000
	cntP, cntN := map[int32]int{}, map[int32]int{}
	for rep := 0; rep < n; rep++ {
		got := Random{}.Mine(d, labels, rng)
		checkValid(t, got, labels)
		if got.Len() != 6 { // index 6 has no positive
			t.Fatalf("got %d triplets, want 6", got.Len())
		}
		cntP[got.P[0]]++
		cntN[got.N[0]]++
	}
	// anchor 0: positives 1,2,3 (p = 1/3), negatives 4,5,6 (p = 1/3).
	for _, c := range []map[int32]int{cntP, cntN} {
		for k, v := range c {
			if f := float64(v) / n; math.Abs(f-1.0/3) > 4*math.Sqrt(1.0/3*2.0/3/n) {
				t.Fatalf("index %d frequency %.4f, want 1/3", k, f)
			}
		}
	}
}

func TestSkipsAnchorsWithoutPositives(t *testing.T) {
	labels := []int{0, 1, 1, 2}
	d := symmetric(4, 1, 1, 1, 0.5, 1, 1)
	rng := rand.New(rand.NewSource(4))
	for _, m := range []Miner{Random{}, &Semihard{Margin: 0.2}, Softhard{}, BatchHard{}, &DistanceWeighted{Dim: 8, Cutoff: 0.5, UpperCutoff: 1.4}} {
		got := m.Mine(d, labels, rng)
		checkValid(t, got, labels)
		if got.Len() != 2 || got.A[0] != 1 || got.A[1] != 2 {
			t.Fatalf("%s: %+v, want anchors 1 and 2 only", m.Name(), got)
		}
	}
}

func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	if err := Check(make([]float32, 3), []int{0, 1}, rng); err == nil {
		t.Fatal("want error for wrong size")
	}
	if err := Check([]float32{0, float32(math.NaN()), 1, 0}, []int{0, 1}, rng); err == nil {
		t.Fatal("want error for NaN")
	}
	if err := Check(make([]float32, 4), []int{0, 1}, nil); err == nil {
		t.Fatal("want error for nil rng")
	}
	for _, info := range All() {
		if got := info.New().Mine(make([]float32, 3), []int{0, 0}, rng); got.Len() != 0 {
			t.Fatalf("%s mined %d triplets from invalid input", info.Name, got.Len())
		}
	}
	if _, err := New("nope"); err == nil {
		t.Fatal("want error for unknown miner")
	}
}

// invQ is an independent evaluation of 1/q(d), q(d) = d^{D−2}(1−d²/4)^{(D−3)/2}.
func invQ(d float64, dim int) float64 {
	return 1 / (math.Pow(d, float64(dim-2)) * math.Pow(1-d*d/4, float64(dim-3)/2))
}

func TestDistanceWeightedFrequencies(t *testing.T) {
	const dim = 16
	labels := []int{0, 0, 1, 2, 3, 4, 5}
	// anchor 0: positive 1; negatives 2..6 at .3 (clipped to .5), .8, 1.0, 1.3, 1.6 (cut).
	d := make([]float32, 49)
	for j, v := range []float32{0.2, 0.3, 0.8, 1.0, 1.3, 1.6} {
		d[0*7+j+1], d[(j+1)*7+0] = v, v
	}
	raw := []float64{invQ(0.5, dim), invQ(0.8, dim), invQ(1.0, dim), invQ(1.3, dim), 0}
	sum := 0.0
	for _, w := range raw {
		sum += w
	}
	m := &DistanceWeighted{Cutoff: 0.5, UpperCutoff: 1.4}
	m.SetDim(dim)
	w := m.Weights(d[:7], []int{2, 3, 4, 5, 6})
	for i := range raw {
		if math.Abs(w[i]-raw[i]/sum) > 1e-9 {
			t.Fatalf("weight %d = %.6g, want %.6g", i, w[i], raw[i]/sum)
		}
	}
	// Frequencies of the sampled negative of anchor 0.
	rng := rand.New(rand.NewSource(6))
	const n = 20000
	cnt := make([]int, 7)
	for rep := 0; rep < n; rep++ {
		got := m.Mine(d, labels, rng)
		checkValid(t, got, labels)
		cnt[got.N[0]]++
	}
	for i := range raw {
		p := raw[i] / sum
		f := float64(cnt[i+2]) / n
		if tol := 4*math.Sqrt(p*(1-p)/n) + 1e-12; math.Abs(f-p) > tol {
			t.Fatalf("negative %d: frequency %.4f, want %.4f ± %.4f", i+2, f, p, tol)
		}
	}
	if cnt[6] != 0 {
		t.Fatalf("negative beyond the 1.4 cut was drawn %d times", cnt[6])
	}
}

func TestDistanceWeightedFallbackWithoutUpperCut(t *testing.T) {
	m := &DistanceWeighted{Dim: 8, Cutoff: 0.5, UpperCutoff: 1.4}
	row := []float32{0, 0.1, 1.5, 1.7}
	w := m.Weights(row, []int{2, 3})
	d2, d3 := float64(row[2]), float64(row[3])
	p2 := invQ(d2, 8) / (invQ(d2, 8) + invQ(d3, 8))
	if math.Abs(w[0]-p2) > 1e-9 || math.Abs(w[0]+w[1]-1) > 1e-12 {
		t.Fatalf("fallback weights %v, want [%.6g %.6g]", w, p2, 1-p2)
	}
}

func equal(t *testing.T, got, want Triplets) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("got %d triplets %+v, want %+v", got.Len(), got, want)
	}
	for i := range want.A {
		if got.A[i] != want.A[i] || got.P[i] != want.P[i] || got.N[i] != want.N[i] {
			t.Fatalf("triplet %d: got (%d,%d,%d), want (%d,%d,%d)", i, got.A[i], got.P[i], got.N[i], want.A[i], want.P[i], want.N[i])
		}
	}
}

// TestRegisteredMiners iterates the registry, so a new miner is checked
// without a line of this file changing (docs/extending.md): with its
// default settings it answers to its registered name, has a one-line
// summary, mines only valid triplets from a batch of unit vectors (three
// classes of four and a lone sample, which is never an anchor nor a
// positive), mines at least one, and gives the same triplets for the same
// seed.
func TestRegisteredMiners(t *testing.T) {
	const b, dim = 13, 8
	labels := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3}
	rng := rand.New(rand.NewSource(11))
	x := make([][]float64, b)
	for i := range x {
		x[i] = make([]float64, dim)
		var n float64
		for k := range x[i] {
			x[i][k] = rng.NormFloat64()
			n += x[i][k] * x[i][k]
		}
		for k := range x[i] {
			x[i][k] /= math.Sqrt(n)
		}
	}
	dist := make([]float32, b*b)
	for i := range x {
		for j := range x {
			var s float64
			for k := range x[i] {
				d := x[i][k] - x[j][k]
				s += d * d
			}
			dist[i*b+j] = float32(math.Sqrt(s))
		}
	}
	for _, info := range All() {
		m := info.New()
		if m.Name() != info.Name || info.Summary == "" || strings.Contains(info.Summary, "\n") {
			t.Errorf("%s: Name() = %q, summary %q", info.Name, m.Name(), info.Summary)
		}
		got := m.Mine(dist, labels, rand.New(rand.NewSource(3)))
		checkValid(t, got, labels)
		if got.Len() == 0 {
			t.Errorf("%s mined no triplet", info.Name)
		}
		for i := range got.A {
			if got.A[i] == b-1 || got.P[i] == b-1 {
				t.Errorf("%s: the lone sample is in triplet (%d,%d,%d)", info.Name, got.A[i], got.P[i], got.N[i])
			}
		}
		if again := m.Mine(dist, labels, rand.New(rand.NewSource(3))); !reflect.DeepEqual(got, again) {
			t.Errorf("%s: same seed, different triplets", info.Name)
		}
	}
}
