package clustering

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// OPTICS orders points by density reachability (Ankerst, Breunig, Kriegel &
// Sander 1999; as scikit-learn OPTICS, Seidenschwarz et al. 2021 Tab. 4 with eps = 0.9, min
// samples = 5) and extracts a flat clustering from the ordering.
//
// Ordering (sklearn OPTICS.fit, max_eps = OPTICSMaxEps, default +Inf):
// core_i = distance to the MinSamples-th nearest row, the row itself
// counted (+Inf when above max_eps); all reachabilities start at +Inf; at
// each step the unprocessed row with the smallest reachability (lowest index
// on ties) is appended to the ordering and, if its core distance is finite,
// every unprocessed row j within max_eps gets
// reach_j = min(reach_j, max(‖x_p − x_j‖, core_p)).
//
// Extraction: the DBSCAN-like cut of sklearn cluster_optics_dbscan (Ankerst
// et al. §4.1 "ExtractDBSCAN-Clustering") at Eps: walking the ordering, a row
// with reach > Eps and core ≤ Eps starts a new cluster, a row with
// reach > Eps and core > Eps is Noise (−1), any other row joins the current
// cluster. (sklearn's default extraction is "xi"; Seidenschwarz et al. 2021 reports one eps
// for both density methods, so the eps cut is used here.) The result equals
// DBSCAN's up to border points reachable from two clusters.
//
// Distances are exact Euclidean (float64). Complexity: O(N²·D) time (every
// processed core point scans all unprocessed rows), O(N) memory beyond the
// k-NN search for the core distances (Params.Searcher, default knn.Exact).
type OPTICS struct{ p Params }

// NewOPTICS validates Eps, MinSamples and OPTICSMaxEps.
func NewOPTICS(p Params) (*OPTICS, error) {
	switch {
	case !(p.Eps > 0) || math.IsInf(p.Eps, 0):
		return nil, fmt.Errorf("%w: optics needs a finite eps > 0, got %v", ErrBadInput, p.Eps)
	case p.MinSamples < 1:
		return nil, fmt.Errorf("%w: optics needs min samples >= 1, got %d", ErrBadInput, p.MinSamples)
	case !(p.OPTICSMaxEps > 0):
		return nil, fmt.Errorf("%w: optics needs max eps > 0 (+Inf allowed), got %v", ErrBadInput, p.OPTICSMaxEps)
	}
	return &OPTICS{p}, nil
}

// Name implements Clusterer.
func (o *OPTICS) Name() string { return "optics" }

// OPTICSResult is the reachability plot of one OPTICS run.
type OPTICSResult struct {
	Ordering     []int32
	Reachability []float64 // per row (+Inf for the first of each component)
	CoreDistance []float64 // per row
	Predecessor  []int32   // per row, −1 when none
}

// Order computes the OPTICS ordering (see OPTICS).
func (o *OPTICS) Order(ctx context.Context, x mat32.Matrix) (*OPTICSResult, error) {
	if err := checkData(x); err != nil {
		return nil, err
	}
	n := x.Rows
	if o.p.MinSamples > n {
		return nil, fmt.Errorf("%w: optics min samples %d exceeds the number of points %d", ErrBadInput, o.p.MinSamples, n)
	}
	searcher := o.p.Searcher
	if searcher == nil {
		searcher = knn.Exact{}
	}
	nb, err := searcher.Search(ctx, x, x, o.p.MinSamples, knn.Options{Metric: knn.L2, Threads: o.p.Threads})
	if err != nil {
		return nil, fmt.Errorf("optics core distances: %w", err)
	}
	maxEps := o.p.OPTICSMaxEps
	r := &OPTICSResult{
		Ordering:     make([]int32, 0, n),
		Reachability: make([]float64, n),
		CoreDistance: make([]float64, n),
		Predecessor:  make([]int32, n),
	}
	for i := 0; i < n; i++ {
		// The k-th neighbour's exact distance (ids from the search, value
		// recomputed in float64; self is among them at distance 0).
		ids := nb.IDsOf(i)
		cd := math.Inf(1)
		if id := ids[o.p.MinSamples-1]; id >= 0 {
			var worst float64
			for _, j := range ids {
				worst = math.Max(worst, math.Sqrt(sqDist64(x.Row(i), x.Row(int(j)))))
			}
			cd = worst
		}
		if cd > maxEps {
			cd = math.Inf(1)
		}
		r.CoreDistance[i] = cd
		r.Reachability[i] = math.Inf(1)
		r.Predecessor[i] = -1
	}
	processed := make([]bool, n)
	for step := 0; step < n; step++ {
		if step%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		p, best := -1, math.Inf(1)
		for j := 0; j < n; j++ {
			if !processed[j] && (p < 0 || r.Reachability[j] < best) {
				p, best = j, r.Reachability[j]
			}
		}
		processed[p] = true
		r.Ordering = append(r.Ordering, int32(p))
		core := r.CoreDistance[p]
		if math.IsInf(core, 1) {
			continue
		}
		xp := x.Row(p)
		for j := 0; j < n; j++ {
			if processed[j] {
				continue
			}
			d := math.Sqrt(sqDist64(xp, x.Row(j)))
			if d > maxEps {
				continue
			}
			if rd := math.Max(d, core); rd < r.Reachability[j] {
				r.Reachability[j] = rd
				r.Predecessor[j] = int32(p)
			}
		}
	}
	return r, nil
}

// ExtractDBSCAN is sklearn's cluster_optics_dbscan at eps (see OPTICS).
func (r *OPTICSResult) ExtractDBSCAN(eps float64) []int32 {
	labels := make([]int32, len(r.Ordering))
	cur := int32(-1)
	for _, p := range r.Ordering {
		far := r.Reachability[p] > eps
		nearCore := r.CoreDistance[p] <= eps
		if far && nearCore {
			cur++
		}
		switch {
		case far && !nearCore:
			labels[p] = Noise
		default:
			labels[p] = cur
		}
	}
	return labels
}

// Cluster implements Clusterer.
func (o *OPTICS) Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error) {
	r, err := o.Order(ctx, x)
	if err != nil {
		return nil, err
	}
	return relabel(r.ExtractDBSCAN(o.p.Eps)), nil
}
