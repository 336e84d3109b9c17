package metrics

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

func col(xs ...float32) mat32.Matrix { return mat32.Matrix{Rows: len(xs), Cols: 1, Data: xs} }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func eval(t *testing.T, in Input, opt Options) *Result {
	t.Helper()
	r, err := Evaluate(context.Background(), in, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func expect(t *testing.T, r *Result, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		got, ok := r.Metrics[k]
		if !ok {
			t.Errorf("%s: missing (have %v)", k, r.Metrics)
			continue
		}
		if !near(got, v) {
			t.Errorf("%s = %.12g, want %.12g", k, got, v)
		}
	}
}

// lineSet is the hand-worked example of the tests below: six points on a
// line, a singleton class C and an exact distance tie (query 4 is 10 away
// from both item 0 and item 5: item 0 must rank first).
//
//	item   0  1  2  3  4   5
//	x      0  1  3  4  10  20
//	label  A  A  B  B  A   C
//
// Neighbour lists without the query (ids, then hit pattern):
//
//	q0 A: 1 2 3 4 5   1 0 0 1 0      q3 B: 2 1 0 4 5   1 0 0 0 0
//	q1 A: 0 2 3 4 5   1 0 0 1 0      q4 A: 3 2 1 0 5   0 0 1 1 0
//	q2 B: 3 1 0 4 5   1 0 0 0 0      q5 C: lone (no other C)
var lineSet = Input{Emb: col(0, 1, 3, 4, 10, 20), Labels: []int32{7, 7, 3, 3, 7, 100}}

var retrievalOnly = []string{"R@k", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}

func TestStrictHandWorked(t *testing.T) {
	r := eval(t, lineSet, Options{Metrics: retrievalOnly, Ks: []int{1, 2, 4, 5}})
	expect(t, r, map[string]float64{
		// R@k over all 6 queries, the lone query scores 0.
		"R@1": 4.0 / 6, "R@2": 4.0 / 6, "R@4": 5.0 / 6, "R@5": 5.0 / 6,
		// MAP@R over the 5 queries with R_q > 0: q0,q1: (1/2)·P@1 = 0.5; q2,q3: 1; q4: 0.
		"MAP@R": 3.0 / 5, "mAP@C": 3.0 / 5,
		// R-Precision: 1/2, 1/2, 1, 1, 0.
		"R-Precision": 3.0 / 5,
		// mAP@1000, W = 5: q0,q1: (1 + 2/4)/2; q2,q3: 1; q4: (1/3 + 2/4)/2.
		"mAP@1000": (0.75 + 0.75 + 1 + 1 + 5.0/12) / 5,
	})
	if r.LoneQueries != 1 {
		t.Errorf("lone queries = %d, want 1", r.LoneQueries)
	}
}

func TestRothHandWorked(t *testing.T) {
	r := eval(t, lineSet, Options{Metrics: retrievalOnly, Ks: []int{1, 2, 4}, Convention: Roth})
	// mAP@1000: N = 6 ≤ 1000, so positions 6..1000 are faiss padding (−1)
	// which reads the last row's label (C): query 5 collects 995 fake hits.
	q5 := 0.0
	for j := 1; j <= 995; j++ {
		q5 += float64(j) / float64(5+j)
	}
	expect(t, r, map[string]float64{
		"R@1": 4.0 / 6, "R@2": 4.0 / 6, "R@4": 5.0 / 6,
		// mAP@C: window and divisor n_c (query included), all 6 queries:
		// q0,q1: 1/3; q2,q3: 1/2; q4: (1/3)/3; q5: 0.
		"mAP@C": (1.0/3 + 1.0/3 + 0.5 + 0.5 + 1.0/9 + 0) / 6,
		// divisor n_c: q0,q1: 1.5/3; q2,q3: 1/2; q4: (1/3+1/2)/3; q5: padding hits.
		"mAP@1000": (0.5 + 0.5 + 0.5 + 0.5 + 5.0/18 + q5) / 6,
	})
	if r.Metrics["mAP@1000"] <= 1 {
		t.Errorf("roth mAP@1000 should reproduce the >1 artefact here, got %v", r.Metrics["mAP@1000"])
	}
	if !hasWarning(r, "mAP@1000") {
		t.Errorf("roth mAP@1000 padding must warn; warnings: %v", r.Warnings)
	}
}

func TestPMLHandWorked(t *testing.T) {
	r := eval(t, lineSet, Options{Metrics: retrievalOnly, Ks: []int{1, 4}, Convention: PML})
	// The lone query 5 is dropped everywhere: 5 queries.
	expect(t, r, map[string]float64{
		"R@1": 4.0 / 5, "R@4": 5.0 / 5, "MAP@R": 3.0 / 5, "R-Precision": 3.0 / 5,
		// divisor = hits inside the window: same as strict here (every query finds all its positives).
		"mAP@1000": (0.75 + 0.75 + 1 + 1 + 5.0/12) / 5,
	})
	if !hasWarning(r, "lone") {
		t.Errorf("expected a lone-query warning, got %v", r.Warnings)
	}
}

func hasWarning(r *Result, sub string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// With a window cut to fewer ranks than the query's positives, strict mAP@1000
// divides by min(R_q, W) while pml divides by R_q, as pytorch-metric-learning
// v2.8.1's mean_average_precision with k = 1000 does (count_per_query).
func TestMAP1000Divisors(t *testing.T) {
	// 1100 items of class 0 at x = 0..1099 and one class-1 item far away.
	n := 1101
	xs := make([]float32, n)
	ls := make([]int32, n)
	for i := 0; i < n-1; i++ {
		xs[i] = float32(i)
	}
	xs[n-1] = 1e5
	ls[n-1] = 1
	in := Input{Emb: col(xs...), Labels: ls}
	strict := eval(t, in, Options{Metrics: []string{"mAP@1000"}})
	// Class-0 queries: the first 1000 neighbours are all hits → AP = 1000/min(1099,1000) = 1.
	// The class-1 query is lone and left out.
	expect(t, strict, map[string]float64{"mAP@1000": 1})
	pml := eval(t, in, Options{Metrics: []string{"mAP@1000"}, Convention: PML})
	// Every class-0 query: 1000 hits in the window, R_q = 1099.
	expect(t, pml, map[string]float64{"mAP@1000": 1000.0 / 1099})
}

func TestPerfectEmbedding(t *testing.T) {
	// Three tight, far-apart classes of sizes 2, 3, 4.
	var xs []float32
	var ls []int32
	for c, size := range []int{2, 3, 4} {
		for i := 0; i < size; i++ {
			xs = append(xs, float32(100*c)+float32(i)*0.01)
			ls = append(ls, int32(c))
		}
	}
	in := Input{Emb: col(xs...), Labels: ls}
	r := eval(t, in, Options{Metrics: retrievalOnly})
	expect(t, r, map[string]float64{"R@1": 1, "R@8": 1, "MAP@R": 1, "R-Precision": 1, "mAP@C": 1, "mAP@1000": 1})
	roth := eval(t, in, Options{Metrics: []string{"mAP@C"}, Convention: Roth})
	// Roth's divisor includes the query: mean((n_c − 1)/n_c) over the 9 queries.
	expect(t, roth, map[string]float64{"mAP@C": (2*(1.0/2) + 3*(2.0/3) + 4*(3.0/4)) / 9})
}

// Duplicate rows with different labels: strict excludes the query by index,
// roth drops column 0 by position, so for the second duplicate the first
// column is the other item and the query itself is counted as a hit.
func TestDuplicateRows(t *testing.T) {
	in := Input{Emb: col(5, 5, 0, 0.5, 9, 9.5), Labels: []int32{0, 1, 0, 0, 1, 1}}
	strict := eval(t, in, Options{Metrics: []string{"R@1"}})
	// q0 → item 1 (label 1) miss; q1 → item 0 miss; q2 → 3 hit; q3 → 2 hit; q4 → 5 hit; q5 → 4 hit.
	expect(t, strict, map[string]float64{"R@1": 4.0 / 6})
	roth := eval(t, in, Options{Metrics: []string{"R@1"}, Convention: Roth})
	// q1's list starts with item 0 (tie at 0, lower index first): dropped; next is itself → hit.
	expect(t, roth, map[string]float64{"R@1": 5.0 / 6})
}

func TestQueryGallery(t *testing.T) {
	q := col(0, 10)
	g := col(1, 9, 11, 30)
	in := Input{Emb: q, Labels: []int32{1, 2}, Gallery: &g, GalleryLabels: []int32{2, 2, 1, 1}}
	r := eval(t, in, Options{Metrics: retrievalOnly, Ks: []int{1, 2}})
	// q0 (label 1): gallery by distance 1(l2) 9(l2) 11(l1) 30(l1): hits 0 0 1 1, R = 2.
	// q1 (label 2): 9(l2) 11(l1) 1(l2) 30(l1): hits 1 0 1 0, R = 2.
	expect(t, r, map[string]float64{
		"R@1": 0.5, "R@2": 0.5,
		"MAP@R":    (0 + 0.5) / 2,
		"mAP@1000": ((1.0/3+2.0/4)/2 + (1+2.0/3)/2) / 2,
	})
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		in   Input
		opt  Options
		want string
	}{
		"length":       {Input{Emb: col(1, 2, 3), Labels: []int32{0, 1}}, Options{}, "3 rows but there are 2 labels"},
		"nan":          {Input{Emb: col(1, float32(math.NaN()), 3), Labels: []int32{0, 1, 1}}, Options{}, "row 1"},
		"inf":          {Input{Emb: col(1, 2, float32(math.Inf(1))), Labels: []int32{0, 1, 1}}, Options{}, "row 2"},
		"single class": {Input{Emb: col(1, 2, 3), Labels: []int32{4, 4, 4}}, Options{}, "one label"},
		"k too big":    {Input{Emb: col(1, 2, 3), Labels: []int32{0, 1, 1}}, Options{Ks: []int{3}}, "larger than the gallery"},
		"empty":        {Input{Emb: mat32.Matrix{}, Labels: nil}, Options{}, "empty"},
		"metric":       {lineSet, Options{Metrics: []string{"R@x"}}, "bad metric"},
		"convention":   {lineSet, Options{Convention: "foo"}, "unknown convention"},
		"distance":     {lineSet, Options{Distance: "manhattan"}, "unknown distance"},
	}
	for name, c := range cases {
		_, err := Evaluate(ctx, c.in, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, c.want)
		}
	}
	g := mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{1, 2}}
	_, err := Evaluate(ctx, Input{Emb: col(1, 2), Labels: []int32{0, 1}, Gallery: &g, GalleryLabels: []int32{0}}, Options{})
	if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("dimension mismatch: %v", err)
	}
}
