package metrics

import (
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// noWatch hides knn.Exact's Watch support, forcing the depth-1000 path.
type noWatch struct{ knn.Exact }

// TestMAP1000RanksMatchDepthSearch: mAP@1000 from watched positive ranks is
// bit-identical to mAP@1000 from a depth-1000 neighbour list, for strict,
// pml and roth (position-dropped column 0, duplicates before the query),
// leave-one-out and query/gallery, with ties (small-integer data),
// singleton classes, and galleries smaller and larger than the window.
func TestMAP1000RanksMatchDepthSearch(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int{40, 700, 1800} {
		d := 3
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(rng.Intn(6)) // many exact distance ties
		}
		labels := make([]int32, n)
		for i := range labels {
			labels[i] = int32(rng.Intn(n/5 + 1))
		}
		emb := mat32.Matrix{Rows: n, Cols: d, Data: x}
		half := n / 2
		q := mat32.Matrix{Rows: half, Cols: d, Data: x[:half*d]}
		g := mat32.Matrix{Rows: n - half, Cols: d, Data: x[half*d:]}
		inputs := map[string]Input{
			"loo": {Emb: emb, Labels: labels},
			"qg":  {Emb: q, Labels: labels[:half], Gallery: &g, GalleryLabels: labels[half:]},
		}
		for name, in := range inputs {
			for _, conv := range []Convention{Strict, PML, Roth} {
				opt := Options{Metrics: []string{"mAP@1000", "R@k", "mAP@C"}, Convention: conv}
				fast := eval(t, in, opt)
				opt.Backend.Searcher = noWatch{}
				slow := eval(t, in, opt)
				for _, k := range []string{"R@1", "mAP@C"} {
					if fast.Metrics[k] != slow.Metrics[k] {
						t.Errorf("n=%d %s %s: %s %v vs %v", n, name, conv, k, fast.Metrics[k], slow.Metrics[k])
					}
				}
				if fast.Metrics["mAP@1000"] != slow.Metrics["mAP@1000"] {
					t.Errorf("n=%d %s %s: mAP@1000 %v from ranks, %v from the depth search",
						n, name, conv, fast.Metrics["mAP@1000"], slow.Metrics["mAP@1000"])
				}
			}
		}
	}
}

// The watched path keeps the search shallow: depth is what R@k needs
// (pml), or one neighbour when strict reads R@k from the exact ranks too.
func TestMAP1000RanksDepth(t *testing.T) {
	labels := make([]int32, 3000)
	for i := range labels {
		labels[i] = int32(i / 5)
	}
	w, err := resolve([]string{"mAP@1000", "R@k"}, []int{1, 2, 4, 8})
	if err != nil {
		t.Fatal(err)
	}
	p, err := newRetrievalPlan(Strict, w, labels, labels, 600, true, true, planExtras{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.rank1000 || !p.fromRanks || p.depth != 1 {
		t.Errorf("rank1000 %v fromRanks %v depth %d, want true true 1", p.rank1000, p.fromRanks, p.depth)
	}
	p, _ = newRetrievalPlan(PML, w, labels, labels, 600, true, true, planExtras{})
	if !p.rank1000 || p.fromRanks || p.depth != 8 {
		t.Errorf("pml: rank1000 %v fromRanks %v depth %d, want true false 8", p.rank1000, p.fromRanks, p.depth)
	}
	p, _ = newRetrievalPlan(Strict, w, labels, labels, 600, true, false, planExtras{})
	if p.rank1000 || p.depth != 1000 {
		t.Errorf("without Watch: rank1000 %v depth %d, want false 1000", p.rank1000, p.depth)
	}
}
