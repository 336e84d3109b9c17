package metrics

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// MRR on lineSet (metrics_test.go): first hits at ranks 1,1,1,1,3 for the
// five queries with a class-mate; the lone query C is left out.
func TestMRRHandWorked(t *testing.T) {
	for _, conv := range []Convention{Strict, PML} {
		r := eval(t, lineSet, Options{Metrics: []string{"MRR"}, Convention: conv})
		expect(t, r, map[string]float64{MRRKey: (1 + 1 + 1 + 1 + 1.0/3) / 5})
	}
	// pml's mean_average_precision over the whole gallery: hits (ranks)
	// q0: 1,4  q1: 1,4  q2: 1  q3: 1  q4: 3,4.
	r := eval(t, lineSet, Options{Metrics: []string{PMLMAPKey}, Convention: PML})
	expect(t, r, map[string]float64{PMLMAPKey: ((1+2.0/4)/2 + (1+2.0/4)/2 + 1 + 1 + (1.0/3+2.0/4)/2) / 5})
}

func TestConventionOnlyMetrics(t *testing.T) {
	if _, err := evalErr(lineSet, Options{Metrics: []string{PMLMAPKey}}); err == nil || !strings.Contains(err.Error(), "--compat pml") {
		t.Errorf("mean_average_precision under strict: %v", err)
	}
	if _, err := evalErr(lineSet, Options{Metrics: []string{"MRR"}, Convention: Roth}); err == nil || !strings.Contains(err.Error(), "Roth") {
		t.Errorf("MRR under roth: %v", err)
	}
	// the default set silently leaves them out
	r := eval(t, lineSet, Options{Metrics: nil, Convention: Roth, Ks: []int{1}})
	if _, ok := r.Metrics[MRRKey]; ok {
		t.Error("roth default set has MRR")
	}
	r = eval(t, lineSet, Options{Ks: []int{1}})
	if _, ok := r.Metrics[PMLMAPKey]; ok {
		t.Error("strict default set has mean_average_precision")
	}
	if _, ok := r.Metrics[MRRKey]; ok {
		t.Error("strict default set has MRR (it is asked for by name)")
	}
	r = eval(t, lineSet, Options{Ks: []int{1}, Convention: PML})
	if _, ok := r.Metrics[MRRKey]; !ok {
		t.Error("pml default set lacks MRR")
	}
	if _, ok := r.Metrics[PMLMAPKey]; !ok {
		t.Error("pml default set lacks mean_average_precision")
	}
	if _, err := evalErr(lineSet, Options{Average: "macro"}); err == nil {
		t.Error("unknown average accepted")
	}
}

// MRR and mean_average_precision from watched ranks equal those from a
// full-depth neighbour list, with ties, lone queries and --pml-k.
func TestRankMetricsWatchedMatchDepth(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	n, d := 300, 2
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.Intn(5))
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.Intn(70))
	}
	emb := mat32.Matrix{Rows: n, Cols: d, Data: x}
	for _, k := range []int{0, 7} {
		for _, rows := range [][]int{nil, {5, 0, 17, 299, 42}} {
			in := Input{Emb: emb, Labels: labels, QueryRows: rows}
			opt := Options{Metrics: []string{"MRR", PMLMAPKey, "mAP@1000", "MAP@R"}, Convention: PML, PMLK: k}
			fast := eval(t, in, opt)
			opt.Backend.Searcher = noWatch{}
			slow := eval(t, in, opt)
			for key, v := range fast.Metrics {
				if v != slow.Metrics[key] {
					t.Errorf("k %d rows %v: %s %v watched, %v searched", k, rows, key, v, slow.Metrics[key])
				}
			}
		}
	}
}

// Query rows score only the listed rows, each excluding itself by index:
// the same as leave-one-out restricted to those rows, per class.
func TestQueryRows(t *testing.T) {
	opt := Options{Metrics: append([]string{"MRR"}, retrievalOnly...), Ks: []int{1, 2}, PerClass: true}
	full := eval(t, lineSet, opt)
	r := eval(t, Input{Emb: lineSet.Emb, Labels: lineSet.Labels, QueryRows: []int{2, 3}}, opt)
	// rows 2 and 3 are class B (label 3): the class's per-class values in
	// the full run.
	var b ClassResult
	for _, c := range full.PerClass {
		if c.Class == "3" {
			b = c
		}
	}
	if b.Queries != 2 || len(b.Metrics) != 7 {
		t.Fatalf("class B of the full run: %+v", b)
	}
	for k, v := range b.Metrics {
		if !near(r.Metrics[k], v) {
			t.Errorf("%s: query rows %v, class B of the full run %v", k, r.Metrics[k], v)
		}
	}
	if r.Queries != 2 || r.Gallery != 5 || r.N != 6 {
		t.Errorf("queries %d gallery %d n %d", r.Queries, r.Gallery, r.N)
	}
	for _, c := range []struct {
		in   Input
		want string
	}{
		{Input{Emb: lineSet.Emb, Labels: lineSet.Labels, QueryRows: []int{}}, "empty"},
		{Input{Emb: lineSet.Emb, Labels: lineSet.Labels, QueryRows: []int{1, 6}}, "row 6, outside 0..5"},
		{Input{Emb: lineSet.Emb, Labels: lineSet.Labels, QueryRows: []int{1, 1}}, "listed twice"},
		{Input{Emb: col(1), Labels: []int32{0}, Gallery: ptr(col(1, 2)), GalleryLabels: []int32{0, 1}, QueryRows: []int{0}}, "one set"},
	} {
		if _, err := evalErr(c.in, Options{Ks: []int{1}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.in.QueryRows, err, c.want)
		}
	}
	if _, err := evalErr(Input{Emb: lineSet.Emb, Labels: lineSet.Labels, QueryRows: []int{1}}, Options{Ks: []int{1}, Convention: Roth}); err == nil || !strings.Contains(err.Error(), "no query subsets") {
		t.Errorf("roth with query rows: %v", err)
	}
}

// One query against a gallery is a valid evaluation, clustering included.
func TestOneQuery(t *testing.T) {
	in := Input{Emb: col(0.9), Labels: []int32{4}, Gallery: ptr(col(0, 1, 5)), GalleryLabels: []int32{2, 4, 4}}
	r := eval(t, in, Options{Ks: []int{1, 2}})
	// ranking: 1 (class 4), 0 (class 2), 5 (class 4); R = 2
	expect(t, r, map[string]float64{"R@1": 1, "R@2": 1, "MAP@R": 1.0 / 2, "R-Precision": 1.0 / 2})
	if r.Queries != 1 || r.Gallery != 3 {
		t.Errorf("queries %d gallery %d", r.Queries, r.Gallery)
	}
	for k, v := range r.Metrics {
		if math.IsNaN(v) && k != "dist_ratio" && k != "rho" {
			t.Errorf("%s undefined for one query", k)
		}
	}
}

// Per-class bookkeeping does not change the per-query values (bit for bit),
// in every convention, and the per-class queries add up to all queries.
func TestPerClassKeepsTotals(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n := 500
	x := make([]float32, n*3)
	for i := range x {
		x[i] = float32(rng.Intn(7))
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.Intn(90))
	}
	in := Input{Emb: mat32.Matrix{Rows: n, Cols: 3, Data: x}, Labels: labels}
	for _, conv := range []Convention{Strict, Roth, PML} {
		opt := Options{Metrics: []string{"R@k", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"}, Convention: conv}
		plain := eval(t, in, opt)
		opt.PerClass = true
		with := eval(t, in, opt)
		for k, v := range plain.Metrics {
			if w := with.Metrics[k]; w != v && !(math.IsNaN(v) && math.IsNaN(w)) {
				t.Errorf("%s %s: %v with per-class sums, %v without", conv, k, w, v)
			}
		}
		q := 0
		for _, c := range with.PerClass {
			q += c.Queries
		}
		if q != n || len(with.PerClass) != plain.Classes {
			t.Errorf("%s: per-class queries %d of %d, %d classes of %d", conv, q, n, len(with.PerClass), plain.Classes)
		}
	}
}

// Without rank watching, a whole-gallery window that would not fit is an
// error naming --pml-k, not an out-of-memory crash; with watching it is
// served at the depth R@k needs.
func TestRankMetricsDepthGuard(t *testing.T) {
	n := 40000
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % 4000)
	}
	w, _ := resolve([]string{"R@1", MRRKey}, nil)
	p, err := newRetrievalPlan(PML, w, labels, labels, 4000, true, false, planExtras{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.depthGuard(n); err == nil || !strings.Contains(err.Error(), "--pml-k") {
		t.Errorf("no guard: depth %d, %v", p.depth, err)
	}
	p, _ = newRetrievalPlan(PML, w, labels, labels, 4000, true, false, planExtras{pmlK: 100})
	if err := p.depthGuard(n); err != nil || p.depth != 100 {
		t.Errorf("--pml-k 100: depth %d, %v", p.depth, err)
	}
	p, _ = newRetrievalPlan(PML, w, labels, labels, 4000, true, true, planExtras{})
	if err := p.depthGuard(n); err != nil || p.depth != 1 || !p.rank1000 {
		t.Errorf("watched: depth %d, %v", p.depth, err)
	}
}

// The chunked search (a small neighbour budget) gives the same MRR,
// mean_average_precision and per-class values as one search, bit for bit,
// with query rows too.
func TestRankMetricsChunkedSearch(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	n := 900
	x := make([]float32, n*2)
	for i := range x {
		x[i] = float32(rng.Intn(9))
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.Intn(6)) // large classes: MAP@R is deep
	}
	emb := mat32.Matrix{Rows: n, Cols: 2, Data: x}
	run := func(rows []int, k, budget int) *Result {
		return eval(t, Input{Emb: emb, Labels: labels, QueryRows: rows},
			Options{Metrics: []string{"R@1", "MAP@R", MRRKey, PMLMAPKey, "mAP@1000"}, Convention: PML, PMLK: k, PerClass: true, Average: PerClass, neighbourBudget: budget})
	}
	for _, rows := range [][]int{nil, {3, 800, 17, 450, 2}} {
		for _, k := range []int{0, 50} {
			whole := run(rows, k, 0)
			chunked := run(rows, k, 5000)
			for key, v := range whole.Metrics {
				if chunked.Metrics[key] != v {
					t.Errorf("rows %v k %d: %s %v chunked, %v whole", rows, k, key, chunked.Metrics[key], v)
				}
			}
			if len(chunked.PerClass) != len(whole.PerClass) {
				t.Fatalf("rows %v k %d: %d classes chunked, %d whole", rows, k, len(chunked.PerClass), len(whole.PerClass))
			}
			for i, c := range whole.PerClass {
				cc := chunked.PerClass[i]
				if cc.Queries != c.Queries {
					t.Errorf("rows %v k %d class %s: %d queries chunked, %d whole", rows, k, c.Class, cc.Queries, c.Queries)
				}
				for key, v := range c.Metrics {
					if cc.Metrics[key] != v {
						t.Errorf("rows %v k %d class %s: %s %v chunked, %v whole", rows, k, c.Class, key, cc.Metrics[key], v)
					}
				}
			}
		}
	}
}
