package metrics

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// rankSuite is a suite strict reads from the watched ranks alone.
var rankSuite = []string{"R@1", "R@2", "R@4", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}

// TestStrictFromRanks: when every metric asked is read from the exact
// watched ranks (retrievalPlan.fromRanks), the values equal, bit for bit,
// those read from certified neighbour lists (a searcher whose ranks are
// not exact makes strict search as deep as the windows and recheck the
// lists), and the exact reference's (integer arithmetic), on near-ties,
// 1-ulp copies, duplicates, lone queries, galleries smaller than the
// windows, query/gallery sets and cosine. Run under every kernel level by
// make test-kernels.
func TestStrictFromRanks(t *testing.T) {
	t.Parallel()
	inputs := tieInputs()
	inputs["1 ulp copies"] = ulpCopies(30, 16, 8, 6)
	rng := rand.New(rand.NewSource(21))
	// Duplicated rows, classes of 1 to 9 (lone queries), 7 rows (N ≤ k).
	for _, n := range []int{7, 90, 400} {
		x := mat32.Matrix{Rows: n, Cols: 5, Data: make([]float32, n*5)}
		labels := make([]int32, n)
		for i := 0; i < n; i++ {
			if i > 0 && rng.Intn(4) == 0 {
				copy(x.Row(i), x.Row(rng.Intn(i)))
			} else {
				for k := range x.Row(i) {
					x.Row(i)[k] = float32(rng.Intn(5))
				}
			}
			labels[i] = int32(rng.Intn(max(2, n/5)))
		}
		inputs[map[int]string{7: "7 rows", 90: "dups 90", 400: "dups 400"}[n]] = Input{Emb: x, Labels: labels}
	}
	for name, in := range inputs {
		for _, distance := range []string{"", "cosine"} {
			if distance == "cosine" && name == "origin t,t,t,1" {
				continue // a zero row has no cosine
			}
			keys := rankSuite
			if in.Emb.Rows < 5 {
				keys = []string{"R@1", "MAP@R", "mAP@1000"}
			}
			opt := Options{Convention: Strict, Metrics: keys, Distance: distance}
			got, err := Evaluate(context.Background(), in, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			opt.Backend = Backend{Searcher: float32Watch{}}
			lists, err := Evaluate(context.Background(), in, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, k := range keys {
				a, b := got.Metrics[k], lists.Metrics[k]
				if math.Float64bits(a) != math.Float64bits(b) {
					t.Errorf("%s %s: %s = %.17g from ranks, %.17g from lists", name, distance, k, a, b)
				}
			}
		}
		checkExact(t, name+" (ranks)", in, "", "R@1", "R@4", "MAP@R", "mAP@1000")
	}
}

// TestFromRanksPlan: the plan reads ranks only for strict suites whose
// windows the watch covers and that hold no per-query metric.
func TestFromRanksPlan(t *testing.T) {
	labels := make([]int32, 3000)
	for i := range labels {
		labels[i] = int32(i % 300)
	}
	for _, c := range []struct {
		conv    Convention
		metrics []string
		want    bool
	}{
		{Strict, rankSuite, true},
		{Strict, []string{"R@1", "MAP@R"}, false},              // no watch: a list of R
		{Strict, []string{"mAP@1000", "MRR"}, false},           // MRR is per query
		{Strict, []string{"R@1", "R@2000", "mAP@1000"}, false}, // a window beyond 1000
		{PML, rankSuite, false},
	} {
		_, _, w, err := resolveOptions(Options{Convention: c.conv, Metrics: c.metrics})
		if err != nil {
			t.Fatal(err)
		}
		p, err := newRetrievalPlan(c.conv, w, labels, labels, 300, true, true, planExtras{})
		if err != nil {
			t.Fatal(err)
		}
		if p.fromRanks != c.want || c.want && p.depth != 1 {
			t.Errorf("%v %v: fromRanks %v depth %d, want %v", c.conv, c.metrics, p.fromRanks, p.depth, c.want)
		}
	}
}
