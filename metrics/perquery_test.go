package metrics

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// The column means of the per-query values are the printed metrics bit for
// bit, under every convention, leave-one-out, query/gallery and query
// rows, per-query and per-class averaging, with more than one 2048-query
// block, lone queries, ties and the chunked search; the per-class values
// are the class means of the same columns.
func TestPerQueryMeansBitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	n, d, classes := 2600, 4, 200
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.Intn(6)) + 0.25*float32(rng.NormFloat64())
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.Intn(classes))
	}
	labels[7], labels[2500] = int32(classes), int32(classes+1) // lone queries
	emb := mat32.Matrix{Rows: n, Cols: d, Data: x}
	half := 2100
	q := mat32.Matrix{Rows: half, Cols: d, Data: x[:half*d]}
	g := mat32.Matrix{Rows: n - half, Cols: d, Data: x[half*d:]}
	var rows []int
	for i := 0; i < n; i += 2 {
		rows = append(rows, i)
	}
	inputs := map[string]Input{
		"loo":  {Emb: emb, Labels: labels},
		"qg":   {Emb: q, Labels: labels[:half], Gallery: &g, GalleryLabels: labels[half:]},
		"rows": {Emb: emb, Labels: labels, QueryRows: rows},
	}
	metricSets := map[Convention][]string{
		Strict: {"R@k", "MAP@R", "R-Precision", "mAP@C", "mAP@1000", "MRR", "P@10"},
		PML:    {"R@k", "MAP@R", "R-Precision", "mAP@1000", "MRR", "P@10", PMLMAPKey},
		Roth:   {"R@k", "MAP@R", "R-Precision", "mAP@C", "mAP@1000"},
	}
	for name, in := range inputs {
		for conv, ms := range metricSets {
			if name == "rows" && conv == Roth {
				continue // roth has no query rows
			}
			for _, avg := range []Average{PerQuery, PerClass} {
				for _, budget := range []int{0, 30000} {
					if budget > 0 && (name != "loo" || avg == PerClass) {
						continue // the chunked search: one case, for time
					}
					opt := Options{Metrics: ms, Ks: []int{1, 4, 16}, Convention: conv, Average: avg, PerQuery: true, PerClass: true, neighbourBudget: budget}
					res := eval(t, in, opt)
					pq := res.PerQuery
					if pq == nil || len(pq.Keys) == 0 {
						t.Fatalf("%s %s: no per-query values", name, conv)
					}
					if len(pq.Index) != res.Queries {
						t.Errorf("%s %s: %d per-query rows, %d queries", name, conv, len(pq.Index), res.Queries)
					}
					for j, k := range pq.Keys {
						want, ok := res.Metrics[k]
						if !ok {
							t.Errorf("%s %s: column %s was not asked", name, conv, k)
							continue
						}
						got := Mean(pq.Index, pq.Values[j])
						if avg == PerClass {
							got = pq.ClassAverage(j)
						}
						if math.Float64bits(got) != math.Float64bits(want) {
							t.Errorf("%s %s %s budget %d: %s column mean %v, metric %v", name, conv, avg, budget, k, got, want)
						}
						_, means := pq.ClassMeans(j)
						if len(means) != len(res.PerClass) {
							t.Fatalf("%s %s: %d class means, %d classes", name, conv, len(means), len(res.PerClass))
						}
						for c, m := range means {
							pc, ok := res.PerClass[c].Metrics[k]
							if ok != !math.IsNaN(m) || (ok && math.Float64bits(pc) != math.Float64bits(m)) {
								t.Errorf("%s %s: class %s %s: mean %v, per-class %v", name, conv, res.PerClass[c].Class, k, m, pc)
							}
						}
					}
				}
			}
		}
	}
}

// A hand-computed case: 4 items on a line, classes a a b b, strict, R_q = 1.
// Row 1 (a) ties 0 (a) and 2 (b), the lower index first: a hit. Row 2 (b)
// ties 1 (a) and 3 (b): 1 first, a miss at rank 1, so R@1 = AP@R = 0.
func TestPerQueryHandComputed(t *testing.T) {
	t.Parallel()
	in := Input{Emb: mat32.Matrix{Rows: 4, Cols: 1, Data: []float32{0, 1, 2, 3}}, Labels: []int32{0, 0, 1, 1}}
	res := eval(t, in, Options{Metrics: []string{"R@1", "MAP@R"}, PerQuery: true})
	pq := res.PerQuery
	want := map[string][]float64{"R@1": {1, 1, 0, 1}, "MAP@R": {1, 1, 0, 1}}
	for k, w := range want {
		got := pq.Column(k)
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s: row %d = %v, want %v (column %v)", k, i, got[i], w[i], got)
			}
		}
	}
	if pq.Column("R-Precision") != nil {
		t.Errorf("R-Precision was not asked but has a column: %v", pq.Keys)
	}
}
