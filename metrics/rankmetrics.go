package metrics

import (
	"fmt"
	"sort"
)

// Metrics that read the ranks of a query's same-class items over the whole
// ranking (Descriptor.Depth PositiveRanks), as pytorch-metric-learning's
// AccuracyCalculator (Musgrave et al. 2020's library, v2.8.1) defines them:
// MRR and pml's mean_average_precision, with pml's explicit k (--pml-k),
// which also truncates MAP@R and R-Precision.

const (
	// MRRKey is the mean reciprocal rank: the mean over queries with at
	// least one same-class gallery item of 1/rank of the first such item
	// (0 when none ranks within the window). The window is the whole
	// gallery, or pml's explicit k (--pml-k). pytorch-metric-learning's
	// mean_reciprocal_rank.
	MRRKey = "MRR"
	// PMLMAPKey is pytorch-metric-learning's mean_average_precision: per
	// query (1/R_q) Σ_{i≤k} P@i·rel_i over the first k neighbours, R_q =
	// the query's same-class reference items (v2.8.1,
	// utils/accuracy_calculator.py, mean_average_precision); k is the whole
	// gallery unless --pml-k sets it. With the whole gallery it is the
	// full-ranking AP. Only in the pml convention.
	PMLMAPKey = "mean_average_precision"
)

// PMLKMaxBinCount as Options.PMLK is PML's k = "max_bin_count": the
// largest number of reference items sharing a query's label, over the
// queries' labels, less one when the reference includes the queries
// (pytorch-metric-learning v2.8.1, AccuracyCalculator.determine_k).
const PMLKMaxBinCount = -1

// pmlK resolves Options.PMLK against the dense labels; rows marks the
// query rows (nil: every row).
func pmlK(k int, qLabels, gLabels []int32, rows []bool, classes int, loo bool) int {
	if k != PMLKMaxBinCount {
		return k
	}
	gc := counts(gLabels, classes)
	largest := 0
	for i, y := range qLabels {
		if rows == nil || rows[i] {
			largest = max(largest, gc[y])
		}
	}
	if loo {
		largest--
	}
	return max(largest, 1)
}

// planExtras are the retrievalPlan settings beyond the metric set.
type planExtras struct {
	pmlK     int    // pml's explicit k (0: the whole gallery)
	rows     []bool // rows[i]: row i is a query (nil: every row)
	perClass bool   // accumulate per-class sums
	budget   int    // neighbour-list entries held at once (0: defaultNeighbourBudget)
	// ranged: only query rows [lo, hi) are searched and scored (one
	// shard of EvaluateShard); the plan is still that of all queries.
	ranged bool
	lo, hi int
}

// scored reports whether query row i is scored.
func (p *retrievalPlan) scored(i int) bool { return p.extras.rows == nil || p.extras.rows[i] }

// rWindow is the MAP@R / R-Precision window for a query with rq
// positives: rq, or min(rq, k) when pml's explicit k truncates it (as
// pytorch-metric-learning v2.8.1 does when k is smaller than a class:
// get_relevance_mask cuts the mask at the k columns it has).
func (p *retrievalPlan) rWindow(rq int) int {
	if p.conv == PML && p.extras.pmlK > 0 {
		return min(rq, p.extras.pmlK)
	}
	return rq
}

// kWindow is the window of MRR and mean_average_precision: the gallery,
// or pml's explicit k.
func (p *retrievalPlan) kWindow() int {
	if p.conv == PML && p.extras.pmlK > 0 {
		return min(p.extras.pmlK, p.gallery)
	}
	return p.gallery
}

// reciprocalRank is MRR's term: 1/rank of the query's first same-class
// item within its window (0 when none ranks there); lone queries are left
// out (pytorch-metric-learning v2.8.1, mean_reciprocal_rank).
func reciprocalRank(q QueryHits) (float64, bool) {
	if q.R == 0 {
		return 0, false
	}
	if len(q.Ranks) == 0 {
		return 0, true
	}
	return 1 / float64(q.Ranks[0]), true
}

// pmlAveragePrecision is mean_average_precision's term: (1/R_q) Σ P@i·rel_i
// over the window, from the ranks of the hits (pytorch-metric-learning
// v2.8.1, mean_average_precision: the divisor is count_per_query = R_q).
func pmlAveragePrecision(q QueryHits) (float64, bool) {
	if q.R == 0 {
		return 0, false
	}
	sum, _ := rankPrecisionSum(q.Ranks)
	return sum / float64(q.R), true
}

// hitRanks appends to buf[:0] the 1-based ranks of the hits among the
// first w entries of h: the ranks a watched search reports.
func hitRanks(h []bool, w int, buf []int32) []int32 {
	buf = buf[:0]
	for i := 0; i < min(w, len(h)); i++ {
		if h[i] {
			buf = append(buf, int32(i+1))
		}
	}
	return buf
}

// ranksWithin returns the prefix of ascending ranks that are ≤ w.
func ranksWithin(ranks []int32, w int) []int32 {
	n := sort.Search(len(ranks), func(i int) bool { return int(ranks[i]) > w })
	return ranks[:n]
}

// rankWarnings reports pml's explicit-k truncation.
func rankWarnings(p *retrievalPlan, pmlK int) []string {
	var warn []string
	if pmlK > 0 {
		cut := 0
		for i, y := range p.qLabels {
			if p.scored(i) && p.relevant[y] > pmlK {
				cut++
			}
		}
		if cut > 0 && p.mapR {
			warn = append(warn, fmt.Sprintf("--pml-k %d is smaller than R for %d queries: as pytorch-metric-learning does with an explicit k, MAP@R sums over the first %d neighbours but divides by R, and R-Precision divides by %d (non-standard; its own warning calls the result incorrect); omit --pml-k for the standard values", pmlK, cut, pmlK, pmlK))
		}
	}
	return warn
}

// maxNeighbourEntries bounds queries × depth of a search that MRR or
// mean_average_precision alone make gallery-deep (8 bytes per entry: 8 GiB).
const maxNeighbourEntries = 1 << 30

// depthGuard refuses a search that the whole-gallery window of MRR or
// mean_average_precision would make too large to hold (a backend without
// rank watching, such as faiss), naming the way out.
func (p *retrievalPlan) depthGuard(queries int) error {
	if !p.ranked || p.rank1000 || p.rankWindow <= map1000Window {
		return nil
	}
	if entries := int64(p.depth) * int64(queries); entries > maxNeighbourEntries {
		return inputErr("MRR / mean_average_precision over the whole gallery need a %d-deep search for %d queries with this k-NN backend (%.1f GiB): pass --pml-k K (PML's explicit k), use --backend exact, or leave them out with --metrics",
			p.depth, queries, float64(entries)*8/(1<<30))
	}
	return nil
}
