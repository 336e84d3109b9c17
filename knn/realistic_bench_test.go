package knn_test

import (
	"context"
	"sync"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
)

// realisticCase is one of the benchmark inputs of docs/performance.md: the
// test split of the "synthetic" data set with unequal class sizes and
// noisy classes (the same rows as `dmlbench data export --dataset
// synthetic` with these flags and --normalize --split test).
type realisticCase struct {
	name               string
	classes, rows      int // both halves
	minClass, maxClass int
	spread             float64
	n, testClasses     int     // the test split
	r1, mapR, map1000  float64 // strict metrics of metrics.Evaluate, bit for bit
}

var realisticCases = map[string]realisticCase{
	// 20 000 × 128, 500 classes of 4–134 items, R@1 ≈ 0.39.
	"20k": {name: "20k", classes: 1000, rows: 40000, minClass: 4, maxClass: 134, spread: 0.207,
		n: 20000, testClasses: 500, r1: 0.39125, mapR: 0.05390300909727707, map1000: 0.0844204845697464},
	// SOP's test-set shape: 60 502 × 128, 11 316 classes of 2–9 items, R@1 ≈ 0.88.
	"sop": {name: "sop", classes: 22632, rows: 121004, minClass: 2, maxClass: 9, spread: 0.116,
		n: 60502, testClasses: 11316, r1: 0.8837393805163466, mapR: 0.595064089727436, map1000: 0.6946435659395059},
}

var (
	realisticMu   sync.Mutex
	realisticData = map[string]fixtures.Split{}
)

// realisticSplit generates (once per process) the test split of case c.
func realisticSplit(tb testing.TB, c realisticCase) fixtures.Split {
	tb.Helper()
	realisticMu.Lock()
	defer realisticMu.Unlock()
	if s, ok := realisticData[c.name]; ok {
		return s
	}
	ds, err := fixtures.Load("synthetic", fixtures.Options{Seed: 1, Classes: c.classes, Rows: c.rows, Dim: 128,
		MinClass: c.minClass, MaxClass: c.maxClass, Spread: c.spread, Normalize: true})
	if err != nil {
		tb.Fatal(err)
	}
	s := ds.Test
	if s.X.Rows != c.n || s.NumClasses() != c.testClasses {
		tb.Fatalf("%s: %d rows of %d classes, want %d of %d", c.name, s.X.Rows, s.NumClasses(), c.n, c.testClasses)
	}
	realisticData[c.name] = s
	return s
}

// positives are the same-class rows of each row (itself excluded): the
// watch lists metrics.Evaluate asks for under the strict convention.
func positives(labels []int32) [][]int32 {
	members := map[int32][]int32{}
	for j, y := range labels {
		members[y] = append(members[y], int32(j))
	}
	out := make([][]int32, len(labels))
	for i, y := range labels {
		for _, j := range members[y] {
			if int(j) != i {
				out[i] = append(out[i], j)
			}
		}
	}
	return out
}

// benchRealisticSearch times the search metrics.Evaluate runs for the
// default strict suite: leave-one-out, depth = the largest class − 1
// (MAP@R's window), the positives watched up to rank 1000 (mAP@1000).
func benchRealisticSearch(b *testing.B, name string) {
	c := realisticCases[name]
	s := realisticSplit(b, c)
	w := &knn.Watch{IDs: positives(s.Labels), MaxRank: 1000}
	depth := 8
	for _, ids := range w.IDs {
		depth = max(depth, len(ids))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nb, err := knn.Exact{}.Search(context.Background(), s.X, s.X, depth, knn.Options{Exclude: knn.ExcludeSelf, Watch: w})
		if err != nil {
			b.Fatal(err)
		}
		// R@1 from the lists and from the ranks must both be the metric's.
		hits, ranked := 0, 0
		for q := 0; q < nb.N; q++ {
			if s.Labels[nb.IDsOf(q)[0]] == s.Labels[q] {
				hits++
			}
			if len(nb.Ranks[q]) > 0 && nb.Ranks[q][0] == 1 {
				ranked++
			}
		}
		if r1 := float64(hits) / float64(nb.N); r1 != c.r1 || ranked != hits {
			b.Fatalf("R@1 %v from the lists (%d from the ranks), want %v", r1, ranked, c.r1)
		}
	}
}

func BenchmarkRealisticSearch20k(b *testing.B) { benchRealisticSearch(b, "20k") }
func BenchmarkRealisticSearchSOP(b *testing.B) { benchRealisticSearch(b, "sop") }

// benchRealisticEval times the full default metric suite (strict
// convention, pure-Go k-means) on case name and checks the retrieval
// metrics bit for bit and the clustering metrics for plausibility.
func benchRealisticEval(b *testing.B, name string) {
	c := realisticCases[name]
	s := realisticSplit(b, c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := metrics.Evaluate(context.Background(), metrics.Input{Emb: s.X, Labels: s.Labels}, metrics.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m := r.Metrics
		if m["R@1"] != c.r1 || m["MAP@R"] != c.mapR || m["mAP@1000"] != c.map1000 {
			b.Fatalf("R@1 %v MAP@R %v mAP@1000 %v, want %v %v %v", m["R@1"], m["MAP@R"], m["mAP@1000"], c.r1, c.mapR, c.map1000)
		}
		if !(m["NMI"] > 0.5 && m["NMI"] < 1) {
			b.Fatalf("implausible NMI %v", m["NMI"])
		}
		for k, v := range r.Timings {
			b.ReportMetric(v, k+"-s")
		}
	}
}

func BenchmarkRealisticEval20k(b *testing.B) { benchRealisticEval(b, "20k") }

func BenchmarkRealisticEvalSOP(b *testing.B) {
	if testing.Short() {
		b.Skip("SOP-size benchmark skipped in -short")
	}
	benchRealisticEval(b, "sop")
}

// BenchmarkRealisticTop1000_20k times a k = 1000 search of the 20k set
// (every query's 1 000 nearest, leave-one-out: the lists mAP@1000 reads
// where ranks are not watched, and faiss's comparison search) and checks
// R@1 from the lists.
func BenchmarkRealisticTop1000_20k(b *testing.B) {
	c := realisticCases["20k"]
	s := realisticSplit(b, c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nb, err := knn.Exact{}.Search(context.Background(), s.X, s.X, 1000, knn.Options{Exclude: knn.ExcludeSelf})
		if err != nil {
			b.Fatal(err)
		}
		hits := 0
		for q := 0; q < nb.N; q++ {
			if s.Labels[nb.IDsOf(q)[0]] == s.Labels[q] {
				hits++
			}
		}
		if r1 := float64(hits) / float64(nb.N); r1 != c.r1 {
			b.Fatalf("R@1 %v, want %v", r1, c.r1)
		}
	}
}
