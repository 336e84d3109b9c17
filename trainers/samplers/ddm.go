package samplers

import (
	"fmt"
	"math"
	"math/rand"
)

func init() {
	Register(Info{Name: "ddm", Summary: fmt.Sprintf("distance-distribution matching: of %d random SPC-%d candidate batches, the one whose "+
		"pairwise-distance histogram (%d bins over the reference range) is closest in 1-D Wasserstein distance to that of a seeded "+
		"%d-sample reference of the training set (Roth et al. 2020 Tab. 7–9, DDM; embeds the training set every epoch)",
		DefaultCandidates, DefaultSamplesPerClass, DefaultBins, DefaultReference), New: func() Sampler { return &DDM{} }})
}

// DDM is distance-distribution matching (Roth et al. 2020, Tab. 7–9). Once per epoch
// (per Batches call) it draws a seeded reference subsample of Reference
// training samples and histograms their pairwise Euclidean embedding
// distances into Bins equal bins over [min, max] of those distances,
// normalised to sum 1 (h_ref). For each batch it draws Candidates SPC-K
// batches and returns the one minimising the 1-D Wasserstein distance
//
//	W₁(h_ref, h_c) = w · Σ_b |H_ref(b) − H_c(b)|,  H = cumulative histogram, w = bin width,
//
// where h_c histograms the candidate's pairwise distances on the same bins
// (distances outside the reference range count in the end bins). Ties go
// to the first candidate. Zero fields take the Default* values.
type DDM struct {
	store
	K, Candidates, Reference, Bins int
}

// Name implements Sampler.
func (*DDM) Name() string { return "ddm" }

// Batches implements Sampler.
func (s *DDM) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	if err := s.check("ddm", labels); err != nil {
		return nil, err
	}
	ref := subsample(len(labels), orDefault(s.Reference, DefaultReference), rng)
	h := newDistHist(pairDists(s.emb, ref), orDefault(s.Bins, DefaultBins))
	return matchBatches(labels, batchSize, iters, orDefault(s.K, DefaultSamplesPerClass), orDefault(s.Candidates, DefaultCandidates), rng,
		func(b []int) float64 { return h.w1(pairDists(s.emb, b)) }), nil
}

// distHist is a normalised histogram of distances with equal bins over
// [lo, hi].
type distHist struct {
	lo, width float64
	cum       []float64 // cumulative, last = 1
}

func newDistHist(d []float64, bins int) *distHist {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range d {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if len(d) == 0 {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1e-12 // all distances equal: one degenerate range
	}
	h := &distHist{lo: lo, width: (hi - lo) / float64(bins)}
	h.cum = h.cumulative(d, bins)
	return h
}

func (h *distHist) cumulative(d []float64, bins int) []float64 {
	c := make([]float64, bins)
	for _, v := range d {
		b := int((v - h.lo) / h.width)
		c[min(max(b, 0), bins-1)]++
	}
	var s float64
	for i := range c {
		s += c[i]
		c[i] = s
	}
	for i := range c {
		if s > 0 {
			c[i] /= s
		}
	}
	return c
}

// w1 is the 1-D Wasserstein distance between h and the histogram of d on
// h's bins.
func (h *distHist) w1(d []float64) float64 {
	c := h.cumulative(d, len(h.cum))
	var s float64
	for i := range c {
		s += math.Abs(c[i] - h.cum[i])
	}
	return s * h.width
}
