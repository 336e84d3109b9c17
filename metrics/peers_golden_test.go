package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// The conventions' rules, each checked against the values the peers' own
// code returns on the same inputs: testdata/peers_golden.json, written by
// testdata/peers_golden.py, which runs pytorch-metric-learning v2.8.1
// (utils/accuracy_calculator.py) and Roth et al.'s
// Revisiting_Deep_Metric_Learning_PyTorch (metrics/__init__.py
// MetricComputer.compute_standard and metrics/*.py). One test per rule of
// docs/metrics.md's conventions table; each names the function it
// reproduces.

type peerCase struct {
	Seed, N, Dim, Classes, Span int
	Spread                      float64
	Kind, Mode                  string
	Queries, K                  int
	AvgOfAvgs                   bool `json:"avg_of_avgs"`
	Values                      map[string]*float64
	Value                       float64
}

type peersGolden struct {
	PMLHandTable []struct {
		Table            int
		RefIncludesQuery bool `json:"ref_includes_query"`
		AvgOfAvgs        bool `json:"avg_of_avgs"`
		ReturnPerClass   bool `json:"return_per_class"`
		Values           map[string]json.RawMessage
	} `json:"pml_hand_table"`
	PMLRandom     []peerCase `json:"pml_random"`
	PMLMAP1000    []peerCase `json:"pml_map1000"`
	PMLClustering []peerCase `json:"pml_clustering"`
	Roth          []peerCase `json:"roth"`
}

var (
	peersOnce sync.Once
	peers     peersGolden
	peersErr  error
)

func loadPeers(t *testing.T) *peersGolden {
	t.Helper()
	peersOnce.Do(func() {
		b, err := os.ReadFile("testdata/peers_golden.json")
		if err != nil {
			peersErr = err
			return
		}
		peersErr = json.Unmarshal(b, &peers)
	})
	if peersErr != nil {
		t.Fatal(peersErr)
	}
	return &peers
}

// splitMix64 is the stream of peers_golden.py's splitmix64 (Steele et al.
// 2014).
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// peerData regenerates peer_data: n rows of integer coordinates in
// [−span, span], then n labels in [0, classes).
func peerData(c peerCase) (mat32.Matrix, []int32) {
	g := splitMix64(c.Seed)
	x := mat32.Matrix{Rows: c.N, Cols: c.Dim, Data: make([]float32, c.N*c.Dim)}
	for i := range x.Data {
		x.Data[i] = float32(int64(g.next()%uint64(2*c.Span+1)) - int64(c.Span))
	}
	y := make([]int32, c.N)
	for i := range y {
		y[i] = int32(g.next() % uint64(c.Classes))
	}
	return x, y
}

// peerBlobs regenerates blobs: integer class centres in [−4, 4], plus
// spread·u with u of 24 fractional bits, labels i mod classes.
func peerBlobs(c peerCase) (mat32.Matrix, []int32) {
	g := splitMix64(c.Seed)
	centres := make([]float64, c.Classes*c.Dim)
	for i := range centres {
		centres[i] = float64(int64(g.next()%9) - 4)
	}
	x := mat32.Matrix{Rows: c.N, Cols: c.Dim, Data: make([]float32, c.N*c.Dim)}
	y := make([]int32, c.N)
	for i := range y {
		y[i] = int32(i % c.Classes)
		for j := 0; j < c.Dim; j++ {
			u := float64(g.next()>>40)/float64(1<<24) - 0.5
			x.Data[i*c.Dim+j] = float32(centres[int(y[i])*c.Dim+j] + c.Spread*u)
		}
	}
	return x, y
}

// pmlInput is the dmlbench input of a PML case's mode: "separate"
// (reference = the same rows, nothing excluded), "ref_includes_query"
// (leave-one-out) or "query_subset" (the first Queries rows are queries of
// the whole set, each excluding itself).
func pmlInput(c peerCase, x mat32.Matrix, y []int32) Input {
	switch c.Mode {
	case "separate":
		return Input{Emb: x, Labels: y, Gallery: &x, GalleryLabels: y}
	case "query_subset":
		rows := make([]int, c.Queries)
		for i := range rows {
			rows[i] = i
		}
		return Input{Emb: x, Labels: y, QueryRows: rows}
	}
	return Input{Emb: x, Labels: y}
}

// pmlNear compares with PML's value to 1e-9, except MRR: PML's
// mean_reciprocal_rank computes the reciprocal ranks and their mean in
// float32 (argmax(...) + 1.0 is a float32 tensor), so it agrees to float32
// precision only.
func pmlNear(key string, got, want float64) bool {
	if key == MRRKey {
		return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))
	}
	return math.Abs(got-want) <= 1e-9
}

// checkPML evaluates the PML cases that keep(c) selects and compares every
// recorded k-NN metric to 1e-9.
func checkPML(t *testing.T, keep func(peerCase) bool) {
	t.Helper()
	t.Parallel()
	g := loadPeers(t)
	n := 0
	for _, c := range g.PMLRandom {
		if !keep(c) {
			continue
		}
		n++
		x, y := peerData(c)
		opt := Options{Convention: PML, Metrics: pmlMetrics, PMLK: c.K}
		if c.AvgOfAvgs {
			opt.Average = PerClass
		}
		r := eval(t, pmlInput(c, x, y), opt)
		for key, name := range pmlName {
			want := c.Values[name]
			got := r.Metrics[key]
			what := fmt.Sprintf("seed %d n %d classes %d %s k %d avg_of_avgs %v: %s", c.Seed, c.N, c.Classes, c.Mode, c.K, c.AvgOfAvgs, key)
			if want == nil {
				if !math.IsNaN(got) {
					t.Errorf("%s = %v, PML NaN", what, got)
				}
				continue
			}
			if !pmlNear(key, got, *want) {
				t.Errorf("%s = %.15g, PML %.15g", what, got, *want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no recorded case selected")
	}
}

// Self match, pml: each query's own row is excluded by index (inference.py
// return_results: the column holding the query's index is removed, or the
// last column when it is not among the k+1), also for a query subset of the
// reference (get_accuracy with ref_includes_query and query =
// reference[:nq]).
func TestPMLRuleSelfExcludedByIndex(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return c.Mode != "separate" && c.K == 0 && !c.AvgOfAvgs && c.Classes != 103 })
}

// Separate query and reference sets: nothing is excluded, a query that is
// also a reference row finds itself (get_accuracy with ref_includes_query
// False).
func TestPMLRuleSeparateSetsExcludeNothing(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return c.Mode == "separate" && c.K == 0 && !c.AvgOfAvgs && c.Classes != 103 })
}

// Lone queries (no other item of their class in the reference) are left
// out of every k-NN metric (get_lone_query_labels,
// try_getting_not_lone_labels): the 103-class sets of 200 rows have many.
func TestPMLRuleLoneQueriesDropped(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return c.Classes == 103 && !c.AvgOfAvgs })
}

// mean_average_precision divides by R_q, the query's same-class reference
// items (mean_average_precision with at_r False: count_per_query from
// get_relevance_mask), not by the hits in the window; a query with no hit
// in the window scores 0. Shown by windows k = 10 and 98 shorter than R_q.
func TestPMLRuleMeanAveragePrecisionDivisor(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return (c.K == 10 || c.K == 98) && !c.AvgOfAvgs && c.Classes != 103 })
}

// An explicit k (AccuracyCalculator(k=...), determine_k): every k-NN
// metric reads the first k neighbours; MAP@R sums over the first min(R_q, k)
// and divides by R_q (mean_average_precision with at_r True), R-Precision
// divides by min(R_q, k) (r_precision); MRR is 0 without a hit in the first
// k (mean_reciprocal_rank).
func TestPMLRuleExplicitK(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return (c.K == 1 || c.K == 2) && !c.AvgOfAvgs && c.Classes != 103 })
}

// k = "max_bin_count" (determine_k): the largest reference count among the
// query labels, less one when the reference includes the queries.
func TestPMLRuleMaxBinCount(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return c.K == PMLKMaxBinCount && !c.AvgOfAvgs && c.Classes != 103 })
}

// avg_of_avgs (maybe_get_avg_of_avgs): the mean over the non-lone query
// classes of each class's mean.
func TestPMLRuleAvgOfAvgs(t *testing.T) {
	checkPML(t, func(c peerCase) bool { return c.AvgOfAvgs })
}

// mAP@1000 under pml is PML's mean_average_precision with k = min(1000,
// reference size): window k, divisor R_q (mean_average_precision), also
// when R_q > 1000 (2 100 rows in two classes).
func TestPMLRuleMAP1000(t *testing.T) {
	g := loadPeers(t)
	if len(g.PMLMAP1000) == 0 {
		t.Fatal("no recorded case")
	}
	for _, c := range g.PMLMAP1000 {
		x, y := peerData(c)
		r := eval(t, pmlInput(c, x, y), Options{Convention: PML, Metrics: []string{"mAP@1000"}})
		if got := r.Metrics["mAP@1000"]; math.Abs(got-c.Value) > 1e-9 {
			t.Errorf("seed %d n %d %s: mAP@1000 = %.15g, PML mean_average_precision(k=1000) %.15g", c.Seed, c.N, c.Mode, got, c.Value)
		}
	}
}

// mAP@C under pml is MAP@R: PML has no mAP@C, and dmlbench gives it
// MAP@R's window and divisor (mean_average_precision with at_r True).
func TestPMLRuleMAPCIsMAPR(t *testing.T) {
	g := loadPeers(t)
	for _, c := range g.PMLRandom {
		if c.K != 0 || c.AvgOfAvgs || c.Mode != "ref_includes_query" {
			continue
		}
		x, y := peerData(c)
		r := eval(t, pmlInput(c, x, y), Options{Convention: PML, Metrics: []string{"mAP@C"}})
		want := *c.Values["mean_average_precision_at_r"]
		if got := r.Metrics["mAP@C"]; math.Abs(got-want) > 1e-9 {
			t.Errorf("seed %d: mAP@C = %.15g, PML mean_average_precision_at_r %.15g", c.Seed, got, want)
		}
	}
}

// k-means under pml: NMI and AMI of AccuracyCalculator (FaissKMeans(niter=20):
// faiss.Kmeans with its defaults, seed 1234, at most 256 training points per
// centroid; calculate_NMI and calculate_AMI with scikit-learn's scores).
// The 700-row, 2-cluster case trains on a 512-row subsample.
func TestPMLRuleKMeans(t *testing.T) {
	g := loadPeers(t)
	if len(g.PMLClustering) == 0 {
		t.Fatal("no recorded case")
	}
	for _, c := range g.PMLClustering {
		x, y := peerBlobs(c)
		r := eval(t, Input{Emb: x, Labels: y}, Options{Convention: PML, Metrics: []string{"NMI", "AMI"}})
		for key, name := range map[string]string{"NMI": "NMI", "AMI": "AMI"} {
			if got, want := r.Metrics[key], *c.Values[name]; math.Abs(got-want) > 1e-9 {
				t.Errorf("seed %d: %s = %.15g, PML %.15g", c.Seed, key, got, want)
			}
		}
	}
}

// rothKeys maps Roth et al.'s metric names to dmlbench's keys.
var rothKeys = map[string]string{
	"e_recall@1": "R@1", "e_recall@2": "R@2", "e_recall@4": "R@4", "e_recall@8": "R@8",
	"nmi": "NMI", "f1": "F1", "mAP_c": "mAP@C", "mAP_1000": "mAP@1000",
	"dists@intra_over_inter": "dist_ratio", "rho_spectrum@1": "rho",
}

// rothTolerance: retrieval and clustering scores are exact up to the last
// bits of a float64 mean; ρ and π_ratio come from float32 data through
// different float arithmetic (a randomized TruncatedSVD, scipy's cdist).
func rothTolerance(key string) float64 {
	switch key {
	case "rho", "dist_ratio":
		return 1e-5
	}
	return 1e-9
}

// checkRoth evaluates the Roth cases that keep selects, comparing the
// recorded metrics named in names (all when nil).
func checkRoth(t *testing.T, keep func(peerCase) bool, names ...string) {
	t.Helper()
	t.Parallel()
	g := loadPeers(t)
	n := 0
	for _, c := range g.Roth {
		if !keep(c) {
			continue
		}
		n++
		var x mat32.Matrix
		var y []int32
		switch c.Kind {
		case "blobs":
			x, y = peerBlobs(c)
		default:
			x, y = peerData(c)
		}
		if c.Kind == "duplicates" {
			for _, i := range []int{1, 2, 3} {
				copy(x.Row(i), x.Row(0))
			}
			copy(y[:4], []int32{0, 1, 0, 2})
		}
		var keys []string
		for name := range c.Values {
			if len(names) == 0 || contains(names, name) {
				keys = append(keys, rothKeys[name])
			}
		}
		r := eval(t, Input{Emb: x, Labels: y}, Options{Convention: Roth, Metrics: keys})
		for name, want := range c.Values {
			key := rothKeys[name]
			if len(names) > 0 && !contains(names, name) {
				continue
			}
			got := r.Metrics[key]
			if math.Abs(got-*want) > rothTolerance(key)*math.Max(1, math.Abs(*want)) {
				t.Errorf("%s seed %d n %d classes %d: %s = %.15g, Roth et al.'s %s %.15g", c.Kind, c.Seed, c.N, c.Classes, key, got, name, *want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no recorded case selected")
	}
}

func contains(a []string, s string) bool {
	for _, v := range a {
		if v == s {
			return true
		}
	}
	return false
}

// Recall@k under roth (metrics/e_recall.py Metric.__call__, neighbours from
// compute_standard's 'nearest_features': faiss IndexFlatL2 searched k+1
// deep, column 0 dropped): the fraction of all queries, lone ones included,
// with their label among the next k.
func TestRothRuleRecall(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind == "ints" }, "e_recall@1", "e_recall@2", "e_recall@4", "e_recall@8")
}

// Self match under roth: column 0 is dropped by position, whichever of
// several rows at distance 0 faiss ranks first (compute_standard
// 'nearest_features' and metrics/mAP_c.py, mAP_1000.py: search(...)[1][:,1:]).
// Rows 0–3 are one point with labels 0 1 0 2.
func TestRothRuleSelfDroppedByPosition(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind == "duplicates" })
}

// Lone queries under roth count in the mean (e_recall.py divides by
// len(target_labels); mAP_c.py and mAP_1000.py average over every row):
// 150 rows in 120 classes.
func TestRothRuleLoneQueriesCount(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind == "ints" && c.Classes == 120 }, "e_recall@1", "e_recall@2", "mAP_c", "mAP_1000")
}

// mAP@C under roth (metrics/mAP_c.py Metric.__call__): window and divisor
// n_c, the class size with the query, over the neighbours after column 0.
func TestRothRuleMAPC(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind == "ints" }, "mAP_c")
}

// mAP@1000 under roth (metrics/mAP_1000.py Metric.__call__): window 1000,
// divisor n_c; with N ≤ 1000 faiss pads the search with index −1, which
// numpy reads as the last row's label (the 200- and 300-row cases), and
// 1 100 rows need no padding.
func TestRothRuleMAP1000(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind == "ints" }, "mAP_1000")
}

// k-means, NMI and F1 under roth (compute_standard 'kmeans':
// faiss.Clustering(d, n_classes) with niter 20, min_points_per_centroid 1,
// max_points_per_centroid 1e9, then each row's nearest centroid;
// metrics/nmi.py with scikit-learn, metrics/f1.py's pair counting).
func TestRothRuleKMeans(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Values["nmi"] != nil }, "nmi", "f1")
}

// ρ under roth (metrics/rho_spectrum.py, mode 1: KL(U ‖ ŝ) of the
// TruncatedSVD(n_components = D − 1) singular values, the smallest one
// never computed).
func TestRothRuleRho(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind != "duplicates" }, "rho_spectrum@1")
}

// dist_ratio under roth (metrics/dists.py, mode intra_over_inter): the mean
// over classes of the mean cosine distance between distinct members, over
// the mean cosine distance between distinct L2-normalised class means.
// Cases whose classes all have two or more members (see docs/metrics.md for
// singleton classes).
func TestRothRuleDistRatio(t *testing.T) {
	checkRoth(t, func(c peerCase) bool { return c.Kind != "duplicates" && c.Classes != 120 }, "dists@intra_over_inter")
}
