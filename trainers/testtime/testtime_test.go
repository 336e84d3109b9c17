package testtime

import (
	"context"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// Seven points in the plane with distinct pairwise distances. Squared
// distances from q = 1 (2,9): 0 → 8, 4 → 41, 5 → 52, 6 → 72, 3 → 81, 2 → 117.
var plane = mat32.Matrix{Rows: 7, Cols: 2, Data: []float32{
	4, 7, // 0
	2, 9, // 1
	8, 0, // 2
	2, 0, // 3
	7, 5, // 4
	8, 5, // 5
	8, 3, // 6
}}

// TestNeighbourLists: every list starts with the sample itself, then its
// other rows by increasing distance.
func TestNeighbourLists(t *testing.T) {
	lists, err := neighbourLists(context.Background(), plane, 7, knn.Exact{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{
		{0, 1, 4, 5, 6, 3, 2},
		{1, 0, 4, 5, 6, 3, 2},
		{2, 6, 5, 4, 3, 0, 1},
		{3, 2, 6, 4, 0, 5, 1},
		{4, 5, 6, 0, 2, 1, 3},
		{5, 4, 6, 0, 2, 1, 3},
		{6, 5, 4, 2, 0, 3, 1},
	}
	if !reflect.DeepEqual(lists, want) {
		t.Fatalf("lists = %v, want %v", lists, want)
	}
}

// TestReciprocalBatchByHand works Seidenschwarz et al. 2021 §3.3 through for q = 1, k = 6,
// ⌈k/2⌉ = 3, α = 2/3:
//
//	N(1,6) = {1, 0, 4, 5, 6, 3}
//	R(1,6): 6 and 3 drop out (N(6,6) = {6,5,4,2,0,3} and N(3,6) =
//	        {3,2,6,4,0,5} lack 1) → {1, 0, 4, 5}
//	expansion over g ∈ N(1,6), R(g,3) and |R(1,6) ∩ R(g,3)| vs ⅔|R(g,3)|:
//	  g=1: {1,0}   2 ≥ 4/3 ✓      g=0: {0,1}   2 ≥ 4/3 ✓
//	  g=4: {4,5,6} 2 ≥ 2   ✓ → 6 joins (via its reciprocal neighbours 4, 5)
//	  g=5: {5,4,6} 2 ≥ 2   ✓      g=6: {6,5,4} 2 ≥ 2 ✓
//	  g=3: {3}     0 < 2/3 ✗ → 3 stays out
//	Ñ = {1, 0, 4, 5, 6}, by distance to 1: 0 (8), 4 (41), 5 (52), 6 (72).
//
// k_r = 5 keeps Ñ; k_r = 4 cuts the farthest (6); k_r = 7 pads with the
// closest samples outside Ñ: 3 (81), then 2 (117).
func TestReciprocalBatchByHand(t *testing.T) {
	lists, err := neighbourLists(context.Background(), plane, 7, knn.Exact{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reciprocalSet(lists, 1, 6), []int32{1, 0, 4, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("R(1,6) = %v, want %v", got, want)
	}
	if got, want := reciprocalSet(lists, 4, 3), []int32{4, 5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("R(4,3) = %v, want %v", got, want)
	}
	for _, c := range []struct {
		kr   int
		want []int
	}{
		{5, []int{1, 0, 4, 5, 6}},
		{4, []int{1, 0, 4, 5}},
		{6, []int{1, 0, 4, 5, 6, 3}},
		{7, []int{1, 0, 4, 5, 6, 3, 2}},
	} {
		if got := ReciprocalBatch(plane, lists, 1, 6, c.kr, 2.0/3); !reflect.DeepEqual(got, c.want) {
			t.Errorf("k_r = %d: batch %v, want %v", c.kr, got, c.want)
		}
	}
	// α = 1 needs R(g,3) ⊂ R(1,6): g = 4 does not qualify then, so 6 only
	// enters as padding (after 0, 4, 5, it is still the closest outsider).
	if got, want := ReciprocalBatch(plane, lists, 1, 6, 5, 1), []int{1, 0, 4, 5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("α = 1: batch %v, want %v", got, want)
	}
	if got, want := ReciprocalBatch(plane, lists, 1, 6, 4, 1), []int{1, 0, 4, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("α = 1, k_r = 4: batch %v, want %v", got, want)
	}
	// R(3,6): N(3,6) = {3,2,6,4,0,5}; 3 ∈ N(2,6), N(6,6), N(0,6) but not
	// N(4,6) = {4,5,6,0,2,1} nor N(5,6) = {5,4,6,0,2,1} → {3, 2, 6, 0}.
	if got, want := reciprocalSet(lists, 3, 6), []int32{3, 2, 6, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("R(3,6) = %v, want %v", got, want)
	}
}

// fake is a Refiner whose output row p is the input row p followed by the
// batch size, so tests can see which batch refined which row.
type fake struct{ D int }

func (f fake) RefineDim() int { return f.D + 1 }
func (f fake) Refine(emb []float32, B, D int, out []float32) error {
	for p := 0; p < B; p++ {
		copy(out[p*(D+1):], emb[p*D:(p+1)*D])
		out[p*(D+1)+D] = float32(B)
	}
	return nil
}

// TestRefineModes: every mode refines every row exactly from a batch that
// holds it, with the documented batch size.
func TestRefineModes(t *testing.T) {
	// 3 tight groups of 8 on a line.
	N := 24
	emb := mat32.Matrix{Rows: N, Cols: 1, Data: make([]float32, N)}
	for i := range emb.Data {
		emb.Data[i] = float32(100*(i%3) + i)
	}
	for _, c := range []struct {
		opt  Options
		size int
	}{
		{Options{Mode: "reciprocal", K: 4, KR: 6}, 6},
		{Options{Mode: "knn", K: 3, Chunks: 5}, 15},
		{Options{Mode: "cluster", K: 4, Chunks: 2, Seed: 1}, 8},
		{Options{Mode: "cluster", K: 4, Chunks: 2, Clusters: 5, Seed: 1}, 8},
	} {
		out, err := Refine(context.Background(), emb, fake{1}, c.opt)
		if err != nil {
			t.Fatalf("%v: %v", c.opt, err)
		}
		for i := 0; i < N; i++ {
			row := out.Row(i)
			if row[0] != emb.Data[i] || int(row[1]) != c.size {
				t.Errorf("%v: row %d refined to %v, want [%v %d]", c.opt, i, row, emb.Data[i], c.size)
			}
		}
	}
	if _, err := Refine(context.Background(), emb, fake{1}, Options{Mode: "reciprocal", KR: 30}); err == nil {
		t.Error("k_r > N: no error")
	}
	if _, err := Refine(context.Background(), emb, fake{1}, Options{Mode: "bogus"}); err == nil {
		t.Error("unknown mode: no error")
	}
}
