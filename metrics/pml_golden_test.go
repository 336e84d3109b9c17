package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// Cases from pytorch-metric-learning v2.8.1 (Musgrave et al. 2020's
// library), tests/utils/test_calculate_accuracies.py and
// tests/utils/test_calculate_accuracies_large_k.py, restated in this
// project's terms:
//
//	precision_at_1               → R@1 under --compat pml (lone queries dropped)
//	r_precision                  → R-Precision
//	mean_average_precision_at_r  → MAP@R
//	mean_average_precision       → mean_average_precision (pml only)
//	mean_reciprocal_rank         → MRR
//	avg_of_avgs = True           → Average: PerClass
//	return_per_class = True      → Options.PerClass (Result.PerClass)
//	ref_includes_query = True    → leave-one-out, or Input.QueryRows
//	an explicit k                → Options.PMLK (--pml-k)
//
// The hand table's values are checked twice: against the formulas PML's test
// writes (correct_* methods) and against what PML's code returns on it
// (testdata/peers_golden.json, written by testdata/peers_golden.py). PML's
// custom label-comparison cases have no counterpart (dmlbench compares
// labels by equality only) and are not ported.

var pmlMetrics = []string{"R@1", "R-Precision", "MAP@R", PMLMAPKey, MRRKey}

// pmlName maps the keys above to PML's metric names.
var pmlName = map[string]string{"R@1": "precision_at_1", "R-Precision": "r_precision", "MAP@R": "mean_average_precision_at_r",
	PMLMAPKey: "mean_average_precision", MRRKey: "mean_reciprocal_rank"}

// knnLabels is test_accuracy_calculator's knn_labels1: six queries with
// labels 1 1 2 3 4 0 (query_labels), and the labels of their five nearest
// reference items in rank order. PML's label_counts1 gives the reference
// class sizes 0: 2, 1: 3, 2: 5, 3: 4, 4: 5.
var (
	tableQueries = []int32{1, 1, 2, 3, 4, 0}
	knnLabels    = [][]int32{
		{0, 1, 1, 2, 2},
		{1, 0, 1, 1, 3},
		{4, 4, 4, 4, 2},
		{3, 1, 3, 1, 3},
		{0, 0, 4, 2, 2},
		{1, 2, 3, 4, 5},
	}
)

// pmlTableCase builds, for the table above, a reference set whose class
// sizes are PML's label counts plus one item of label 5 (the last query's
// fifth neighbour; no query has label 5, so no query's R changes) and
// neighbour lists whose labels are the table's. With loo (PML's
// ref_includes_query) the queries are reference rows 0..5 and, as in PML's
// test, the table's first column is dropped; otherwise the queries are a
// separate set. shift adds to every query label (PML's second table, whose
// queries are all lone).
func pmlTableCase(t *testing.T, loo bool, shift int32) (qLabels, gLabels []int32, nb *knn.Neighbors) {
	t.Helper()
	query := tableQueries
	count := map[int32]int{0: 2, 1: 3, 2: 5, 3: 4, 4: 5, 5: 1}
	var ref []int32
	if loo {
		ref = append(ref, query...)
		for _, y := range query {
			count[y]--
		}
	}
	for y := int32(0); y <= 5; y++ {
		for i := 0; i < count[y]; i++ {
			ref = append(ref, y)
		}
	}
	cols := knnLabels
	if loo {
		cols = make([][]int32, len(knnLabels))
		for i, r := range knnLabels {
			cols[i] = r[1:]
		}
	}
	k := len(cols[0])
	nq := len(query)
	if loo {
		nq = len(ref) // every row is searched; only rows 0..5 are scored
	}
	nb = &knn.Neighbors{N: nq, K: k, IDs: make([]int32, nq*k), Dist: make([]float32, nq*k)}
	for q := 0; q < len(query); q++ {
		used := map[int]bool{}
		if loo {
			used[q] = true
		}
		for c, y := range cols[q] {
			id := -1
			for j, v := range ref {
				if v == y && !used[j] {
					id = j
					break
				}
			}
			if id < 0 {
				t.Fatalf("query %d: no reference item left for label %d", q, y)
			}
			used[id] = true
			nb.IDs[q*k+c] = int32(id)
		}
	}
	for q := len(query); q < nq; q++ { // unscored rows: any valid list
		for c := 0; c < k; c++ {
			nb.IDs[q*k+c] = int32((q + 1 + c) % len(ref))
		}
	}
	qLabels = query
	if loo {
		qLabels = ref
	}
	if shift != 0 {
		out := make([]int32, len(qLabels))
		for i, v := range qLabels {
			out[i] = v + shift
		}
		return out, ref, nb // only the query labels move: no query class is in the reference
	}
	return qLabels, ref, nb
}

// tableScore is the table scored through the retrieval plan with PML's k =
// the table width: the mean over queries, PML's avg_of_avgs, and the
// per-class values by label (return_per_class).
type tableScore struct {
	perQuery, avgOfAvgs map[string]float64
	perClass            map[int32]map[string]float64
}

func scoreTable(t *testing.T, loo bool, shift int32) tableScore {
	t.Helper()
	qL, gL, nb := pmlTableCase(t, loo, shift)
	ids, classes := denseLabels(qL, gL)
	w, err := resolve(pmlMetrics, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []bool
	if loo {
		rows = make([]bool, len(qL))
		for i := range tableQueries {
			rows[i] = true
		}
	}
	p, err := newRetrievalPlan(PML, w, ids[0], ids[1], classes, loo, false,
		planExtras{pmlK: nb.K, rows: rows, perClass: true})
	if err != nil {
		t.Fatal(err)
	}
	vals, sums := p.score(nb, 1)
	dense, cvals, _ := p.classValues(sums)
	// dense id → label: the sorted distinct labels of both sets.
	var label []int32
	seen := map[int32]bool{}
	for _, v := range append(append([]int32(nil), qL...), gL...) {
		if !seen[v] {
			seen[v] = true
			label = append(label, v)
		}
	}
	sort.Slice(label, func(i, j int) bool { return label[i] < label[j] })
	per := map[int32]map[string]float64{}
	for i, y := range dense {
		per[label[y]] = cvals[i]
	}
	return tableScore{perQuery: vals, avgOfAvgs: classAverage(cvals), perClass: per}
}

func mean(xs ...float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// perLabel is PML's return_per_class list for the table: the classes of
// the query labels in sorted order 0..4 (queries 0 and 1 share label 1;
// query 5 is label 0).
func perLabel(a [6]float64) [5]float64 {
	return [5]float64{a[5], (a[0] + a[1]) / 2, a[2], a[3], a[4]}
}

// pmlHandTable holds the correct_* values of test_accuracy_calculator, per
// query, as PML's test writes them.
type pmlHandTable struct{ p1, rprec, mapr, mAP, mrr [6]float64 }

// correctPMLTable returns the correct_* values for ref_includes_query.
// precision_at_1's per-query values are implied by PML's per-class list and
// its means (2/6 and 1/6).
func correctPMLTable(refIncludesQuery bool) pmlHandTable {
	if !refIncludesQuery {
		return pmlHandTable{
			p1:    [6]float64{0, 1, 0, 1, 0, 0},
			rprec: [6]float64{2.0 / 3, 2.0 / 3, 1.0 / 5, 2.0 / 4, 1.0 / 5, 0},
			mapr:  [6]float64{(1.0/2 + 2.0/3) / 3, (1 + 2.0/3) / 3, (1.0 / 5) / 5, (1 + 2.0/3) / 4, (1.0 / 3) / 5, 0},
			mAP:   [6]float64{(1.0/2 + 2.0/3) / 3, (1 + 2.0/3 + 3.0/4) / 3, (1.0 / 5) / 5, (1 + 2.0/3 + 3.0/5) / 4, (1.0 / 3) / 5, 0},
			mrr:   [6]float64{1.0 / 2, 1, 1.0 / 5, 1, 1.0 / 3, 0},
		}
	}
	return pmlHandTable{
		p1:    [6]float64{1, 0, 0, 0, 0, 0},
		rprec: [6]float64{1.0 / 1, 1.0 / 2, 1.0 / 4, 1.0 / 3, 1.0 / 4, 0},
		mapr:  [6]float64{1, (1.0 / 2) / 2, (1.0 / 4) / 4, (1.0 / 2) / 3, (1.0 / 2) / 4, 0},
		mAP:   [6]float64{1, (1.0/2 + 2.0/3) / 2, (1.0 / 4) / 4, (1.0/2 + 2.0/4) / 3, (1.0 / 2) / 4, 0},
		mrr:   [6]float64{1, 1.0 / 2, 1.0 / 4, 1.0 / 2, 1.0 / 2, 0},
	}
}

// TestPMLHandComputedTable ports test_accuracy_calculator
// (tests/utils/test_calculate_accuracies.py, pytorch-metric-learning
// v2.8.1) as written: all six queries, every k-NN metric, both
// ref_includes_query settings, the plain mean, avg_of_avgs and
// return_per_class.
func TestPMLHandComputedTable(t *testing.T) {
	for _, loo := range []bool{false, true} {
		c := correctPMLTable(loo)
		got := scoreTable(t, loo, 0)
		for key, per := range map[string][6]float64{"R@1": c.p1, "R-Precision": c.rprec, "MAP@R": c.mapr, PMLMAPKey: c.mAP, MRRKey: c.mrr} {
			if g, exp := got.perQuery[key], mean(per[:]...); !near(g, exp) {
				t.Errorf("ref_includes_query %v %s = %.15g, PML %.15g", loo, key, g, exp)
			}
			byLabel := perLabel(per)
			if g, exp := got.avgOfAvgs[key], mean(byLabel[:]...); !near(g, exp) {
				t.Errorf("ref_includes_query %v %s avg_of_avgs = %.15g, PML %.15g", loo, key, g, exp)
			}
			for y, exp := range byLabel {
				if g := got.perClass[int32(y)][key]; !near(g, exp) {
					t.Errorf("ref_includes_query %v %s return_per_class[%d] = %.15g, PML %.15g", loo, key, y, g, exp)
				}
			}
		}
	}
	// PML's precision_at_1 means, stated directly by its test.
	if g := scoreTable(t, false, 0).perQuery["R@1"]; !near(g, 2.0/6) {
		t.Errorf("R@1 = %v, PML 2/6", g)
	}
	if g := scoreTable(t, true, 0).perQuery["R@1"]; !near(g, 1.0/6) {
		t.Errorf("ref_includes_query R@1 = %v, PML 1/6", g)
	}
}

// TestPMLHandTableRunByPML compares the table with what
// AccuracyCalculator._get_accuracy (utils/accuracy_calculator.py,
// pytorch-metric-learning v2.8.1) returned on it, every metric, both
// tables, both ref_includes_query settings, plain, avg_of_avgs and
// return_per_class (testdata/peers_golden.py, pml_hand_table).
func TestPMLHandTableRunByPML(t *testing.T) {
	g := loadPeers(t)
	if len(g.PMLHandTable) != 12 {
		t.Fatalf("%d hand-table runs recorded, want 12", len(g.PMLHandTable))
	}
	for _, run := range g.PMLHandTable {
		shift := int32(0)
		if run.Table == 1 {
			shift = 6 // no query label left in the reference (labels 0..5)
		}
		got := scoreTable(t, run.RefIncludesQuery, shift)
		for key, name := range pmlName {
			raw, ok := run.Values[name]
			if !ok {
				t.Fatalf("no %s in the recorded run", name)
			}
			what := fmt.Sprintf("table %d ref_includes_query %v avg_of_avgs %v per_class %v %s", run.Table+1, run.RefIncludesQuery, run.AvgOfAvgs, run.ReturnPerClass, key)
			switch {
			case run.ReturnPerClass:
				var want []*float64
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatal(err)
				}
				for i, w := range want {
					y := int32(i) // PML lists the query labels' classes in sorted order
					gv, has := got.perClass[y][key]
					if w == nil {
						if has && !math.IsNaN(gv) {
							t.Errorf("%s class %d = %v, PML NaN", what, y, gv)
						}
						continue
					}
					if !has || !pmlNear(key, gv, *w) {
						t.Errorf("%s class %d = %v, PML %.15g", what, y, gv, *w)
					}
				}
			default:
				var want *float64
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatal(err)
				}
				gv := got.perQuery[key]
				if run.AvgOfAvgs {
					gv = got.avgOfAvgs[key]
				}
				if want == nil {
					if !math.IsNaN(gv) {
						t.Errorf("%s = %v, PML NaN", what, gv)
					}
				} else if !pmlNear(key, gv, *want) {
					t.Errorf("%s = %.15g, PML %.15g", what, gv, *want)
				}
			}
		}
	}
}

// PML's second table: no query class is in the reference. PML's unit test
// feeds an all-false lone mask straight to the metric functions and expects
// NaN (nan_accuracy). dmlbench reports a mean over no query as undefined:
// NaN, which the CLI prints as null in JSON and n/a in tables, with a
// warning.
func TestPMLAllLoneIsUndefined(t *testing.T) {
	s := scoreTable(t, false, 6)
	for _, key := range pmlMetrics {
		if !math.IsNaN(s.perQuery[key]) || !math.IsNaN(s.avgOfAvgs[key]) {
			t.Errorf("%s = %v (per class %v), want NaN (undefined)", key, s.perQuery[key], s.avgOfAvgs[key])
		}
	}
	r := eval(t, Input{Emb: col(0, 1), Labels: []int32{1, 2}, Gallery: ptr(col(0, 1, 2)), GalleryLabels: []int32{5, 6, 7}},
		Options{Convention: PML, Metrics: pmlMetrics})
	for _, key := range pmlMetrics {
		if !math.IsNaN(r.Metrics[key]) {
			t.Errorf("end to end %s = %v, want NaN", key, r.Metrics[key])
		}
	}
	if !hasWarning(r, "undefined") {
		t.Errorf("no undefined warning: %v", r.Warnings)
	}
	// strict: lone queries score 0 in R@k (defined), MAP@R has no query.
	r = eval(t, Input{Emb: col(0, 1), Labels: []int32{1, 2}, Gallery: ptr(col(0, 1, 2)), GalleryLabels: []int32{5, 6, 7}},
		Options{Metrics: []string{"R@1", "MAP@R"}})
	if r.Metrics["R@1"] != 0 || !math.IsNaN(r.Metrics["MAP@R"]) {
		t.Errorf("strict all-lone: %v", r.Metrics)
	}
}

func ptr(m mat32.Matrix) *mat32.Matrix { return &m }

func arange(n int, scale float32) mat32.Matrix {
	m := mat32.Matrix{Rows: n, Cols: 1, Data: make([]float32, n)}
	for i := range m.Data {
		m.Data[i] = float32(i) * scale
	}
	return m
}

func seq(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// _test_accuracy_calculator_and_faiss: end to end on 1-D points.
func TestPMLFaissCases(t *testing.T) {
	// query = reference = arange(10), labels arange(10), separate sets.
	g := arange(10, 1)
	r := eval(t, Input{Emb: arange(10, 1), Labels: seq(10), Gallery: &g, GalleryLabels: seq(10)},
		Options{Convention: PML, Metrics: []string{"R@1", "R-Precision", "MAP@R"}})
	expect(t, r, map[string]float64{"R@1": 1, "R-Precision": 1, "MAP@R": 1})

	// reference = arange(20)/2 with labels: even rows 0..9 (row 2i is query
	// i's own point), odd rows 1; ref_includes_query. Only query 1 has
	// another member of its class (R = 10): its hits are at ranks
	// 1, 2, 5, 7, 9 of the first 10.
	ref := arange(20, 0.5)
	refLabels := make([]int32, 20)
	var rows []int
	for i := 0; i < 10; i++ {
		refLabels[2*i] = int32(i)
		refLabels[2*i+1] = 1
		rows = append(rows, 2*i)
	}
	r = eval(t, Input{Emb: ref, Labels: refLabels, QueryRows: rows},
		Options{Convention: PML, Metrics: []string{"R@1", "R-Precision", "MAP@R"}})
	expect(t, r, map[string]float64{"R@1": 1, "R-Precision": 0.5, "MAP@R": (1 + 2.0/2 + 3.0/5 + 4.0/7 + 5.0/9) / 10})
	if r.Queries != 10 || r.Gallery != 19 || r.LoneQueries != 9 {
		t.Errorf("queries %d gallery %d lone %d, want 10 19 9", r.Queries, r.Gallery, r.LoneQueries)
	}
}

// _test_accuracy_calculator_and_faiss_avg_of_avgs: nine class-0 queries
// that retrieve class 0 perfectly and one class-1 query that fails.
func TestPMLAvgOfAvgs(t *testing.T) {
	q := arange(10, 1)
	q.Data[9] = 100
	g := arange(10, 1)
	g.Data[0] = -100
	in := Input{Emb: q, Labels: []int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, Gallery: &g, GalleryLabels: []int32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}}
	keys := []string{"R@1", "R-Precision", "MAP@R"}
	r := eval(t, in, Options{Convention: PML, Metrics: keys})
	expect(t, r, map[string]float64{"R@1": 0.9, "R-Precision": 0.9, "MAP@R": 0.9})
	r = eval(t, in, Options{Convention: PML, Metrics: keys, Average: PerClass, PerClass: true})
	expect(t, r, map[string]float64{"R@1": 0.5, "R-Precision": 0.5, "MAP@R": 0.5})
	if r.Average != PerClass || len(r.PerClass) != 2 || r.PerClass[0].Class != "0" || r.PerClass[0].Queries != 9 ||
		r.PerClass[0].Metrics["MAP@R"] != 1 || r.PerClass[1].Metrics["R@1"] != 0 {
		t.Errorf("per_class %+v", r.PerClass)
	}
	in.ClassNames = []string{"shirt", "shoe"}
	r = eval(t, in, Options{Convention: PML, Metrics: keys, PerClass: true})
	if r.PerClass[1].Class != "shoe" || !near(r.Metrics["R@1"], 0.9) {
		t.Errorf("named per_class %+v, R@1 %v", r.PerClass, r.Metrics["R@1"])
	}
}

// PML's explicit k smaller than a class (utils/accuracy_calculator.py
// v2.8.1): mean_average_precision(at_r=True) sums over the first min(R, k)
// neighbours and divides by R (count_per_query); r_precision divides by
// min(R, k); mean_average_precision and mean_reciprocal_rank read the first
// k. The table's queries at k = 2 (separate sets; R = 3 3 5 4 5 2).
func TestPMLExplicitKTruncation(t *testing.T) {
	qL, gL, nb := pmlTableCase(t, false, 0)
	dense, classes := denseLabels(qL, gL)
	w, _ := resolve([]string{"R-Precision", "MAP@R", PMLMAPKey, MRRKey}, nil)
	p, err := newRetrievalPlan(PML, w, dense[0], dense[1], classes, false, false, planExtras{pmlK: 2})
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := p.score(nb, 1)
	// first two labels per query: {0,1} {1,0} {4,4} {3,1} {0,0} {1,2}
	expRP := mean(1.0/2, 1.0/2, 0, 1.0/2, 0, 0)
	expMAPR := mean((1.0/2)/3, 1.0/3, 0, 1.0/4, 0, 0)
	expMAP := expMAPR // window k = 2 = min(R, 2) for every query, divisor R
	expMRR := mean(1.0/2, 1, 0, 1, 0, 0)
	for k, v := range map[string]float64{"R-Precision": expRP, "MAP@R": expMAPR, PMLMAPKey: expMAP, MRRKey: expMRR} {
		if !near(vals[k], v) {
			t.Errorf("k = 2: %s = %v, want %v", k, vals[k], v)
		}
	}
	// End to end: the warning names the truncation; strict refuses --pml-k.
	in := Input{Emb: arange(12, 1), Labels: []int32{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}}
	r := eval(t, in, Options{Convention: PML, Metrics: []string{"MAP@R", "R-Precision"}, PMLK: 3})
	if !hasWarning(r, "--pml-k 3 is smaller than R") {
		t.Errorf("no truncation warning: %v", r.Warnings)
	}
	// 1-D runs of 6: every query's first 3 neighbours include all its
	// class's nearest; R = 5, window 3, divisor 5, so MAP@R ≤ 3/5.
	if v := r.Metrics["MAP@R"]; v > 3.0/5+1e-12 {
		t.Errorf("truncated MAP@R %v exceeds 3/5: divisor must stay R", v)
	}
	if _, err := evalErr(in, Options{PMLK: 3}); err == nil {
		t.Error("--pml-k accepted under strict")
	}
}

// test_calculate_accuracies_large_k: random 5-d points, 100 classes of 10
// (N = 1000) or, for N = 2100, class 0 with 1110 members (more than faiss's
// old 1024 limit); PML's default k (the whole reference) and k =
// "max_bin_count" (the largest class, minus the query itself when the
// reference includes it), against a brute-force implementation of the
// definitions as PML's test writes them (float64 distances).
func TestPMLLargeK(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int{1000, 2100} {
		x := mat32.Matrix{Rows: n, Cols: 5, Data: make([]float32, n*5)}
		for i := range x.Data {
			x.Data[i] = rng.Float32()
		}
		labels := make([]int32, n)
		for i := 0; i < 10*100 && i < n; i++ {
			labels[i] = int32(i % 100)
		}
		binMax := map[int32]int{}
		maxCount := 0
		for _, y := range labels {
			binMax[y]++
			maxCount = max(maxCount, binMax[y])
		}
		for _, loo := range []bool{true, false} {
			order := pmlRanking(x, loo)
			for _, maxBin := range []bool{false, true} {
				self := 0
				if loo {
					self = 1
				}
				k := n - self
				if maxBin {
					k = maxCount - self
				}
				p1, mAP, mapR := bruteForcePML(order, labels, k)
				in := Input{Emb: x, Labels: labels}
				if !loo {
					in.Gallery, in.GalleryLabels = &x, labels
				}
				opt := Options{Convention: PML, Metrics: []string{"R@1", PMLMAPKey, "MAP@R"}}
				if maxBin {
					opt.PMLK = PMLKMaxBinCount // PML's k = "max_bin_count"
				}
				r := eval(t, in, opt)
				for key, v := range map[string]float64{"R@1": p1, PMLMAPKey: mAP, "MAP@R": mapR} {
					// PML's test compares with np.isclose (rtol 1e-5, atol
					// 1e-8): float32 distances may order near-ties
					// differently from this float64 ranking.
					if math.Abs(r.Metrics[key]-v) > 1e-8+1e-5*math.Abs(v) {
						t.Errorf("n %d loo %v k %d: %s = %.12g, brute force %.12g", n, loo, k, key, r.Metrics[key], v)
					}
				}
			}
		}
	}
}

// pmlRanking ranks every reference row for every query by exact float64
// squared distance (ties to the lower index).
func pmlRanking(x mat32.Matrix, loo bool) [][]int32 {
	n := x.Rows
	out := make([][]int32, n)
	d := make([]float64, n)
	for q := 0; q < n; q++ {
		ids := make([]int32, 0, n)
		for j := 0; j < n; j++ {
			if loo && j == q {
				continue
			}
			s := 0.0
			for t := 0; t < x.Cols; t++ {
				v := float64(x.Data[q*x.Cols+t]) - float64(x.Data[j*x.Cols+t])
				s += v * v
			}
			d[j] = s
			ids = append(ids, int32(j))
		}
		sort.Slice(ids, func(a, b int) bool {
			if d[ids[a]] != d[ids[b]] {
				return d[ids[a]] < d[ids[b]]
			}
			return ids[a] < ids[b]
		})
		out[q] = ids
	}
	return out
}

// bruteForcePML applies the definitions of PML's large-k test (evaluate in
// test_calculate_accuracies_large_k.py) to a ranking: P@1 over all
// queries; AP = Σ precision at the hits within k over R = all matches of the
// full ranking (0 when R = 0); MAP@R the same over the first min(R, k).
func bruteForcePML(order [][]int32, labels []int32, k int) (p1, mAP, mapR float64) {
	n := len(order)
	correct := 0
	for q, c := range order {
		allRel := 0
		for _, id := range c {
			if labels[id] == labels[q] {
				allRel++
			}
		}
		rel, sumP, sumR := 0, 0.0, 0.0
		for i := 0; i < k; i++ {
			if labels[c[i]] == labels[q] {
				rel++
				sumP += float64(rel) / float64(i+1)
				if i == 0 {
					correct++
				}
				if i < allRel {
					sumR += float64(rel) / float64(i+1)
				}
			}
		}
		if allRel > 0 {
			mAP += sumP / float64(allRel)
		}
		if allRel > 0 {
			mapR += sumR / float64(allRel)
		}
	}
	return float64(correct) / float64(n), mAP / float64(n), mapR / float64(n)
}

func evalErr(in Input, opt Options) (*Result, error) {
	return Evaluate(context.Background(), in, opt)
}

// Ties: identical points, as in PML's test_many_tied_distances (10 000
// copies of one point). Every distance is 0, so each ranking is the index
// order (the query itself left out): the brute force needs no distances.
func TestPMLAllTied(t *testing.T) {
	n := 3000
	x := mat32.Matrix{Rows: n, Cols: 4, Data: make([]float32, n*4)}
	for i := range x.Data {
		x.Data[i] = 0.25
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32((i * 7) % 13)
	}
	order := make([][]int32, n)
	for q := range order {
		o := make([]int32, 0, n-1)
		for j := 0; j < n; j++ {
			if j != q {
				o = append(o, int32(j))
			}
		}
		order[q] = o
	}
	p1, mAP, mapR := bruteForcePML(order, labels, n-1)
	mrr := 0.0
	for q, o := range order {
		for i, id := range o {
			if labels[id] == labels[q] {
				mrr += 1 / float64(i+1)
				break
			}
		}
	}
	mrr /= float64(n)
	r := eval(t, Input{Emb: x, Labels: labels}, Options{Convention: PML, Metrics: []string{"R@1", PMLMAPKey, "MAP@R", MRRKey}})
	for key, v := range map[string]float64{"R@1": p1, PMLMAPKey: mAP, "MAP@R": mapR, MRRKey: mrr} {
		if !near(r.Metrics[key], v) {
			t.Errorf("%s = %.15g, brute force %.15g", key, r.Metrics[key], v)
		}
	}
}
