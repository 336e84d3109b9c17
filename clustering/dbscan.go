package clustering

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// DBSCAN is density-based clustering (Ester, Kriegel, Sander & Xu 1996; as
// scikit-learn DBSCAN, Seidenschwarz et al. 2021 Tab. 4 with eps = 0.9, min samples = 5):
// a row is a core point when its closed eps-ball (Euclidean distance ≤ Eps,
// the row itself included) holds at least MinSamples rows; clusters are the
// connected components of core points under the eps relation plus the
// non-core rows within Eps of one of their core points (a border row
// reachable from several clusters joins the first one found, scanning core
// points in row order — sklearn's order). Every other row is Noise (−1).
//
// Neighbourhoods come from radiusNeighbors, a blocked exact range search.
// Complexity: O(N²·D) time, O(N + Σ|ball|) memory (the neighbour lists; a
// too-large Eps makes this quadratic).
type DBSCAN struct{ p Params }

// NewDBSCAN validates Eps and MinSamples.
func NewDBSCAN(p Params) (*DBSCAN, error) {
	if !(p.Eps > 0) || math.IsInf(p.Eps, 0) {
		return nil, fmt.Errorf("%w: dbscan needs a finite eps > 0, got %v", ErrBadInput, p.Eps)
	}
	if p.MinSamples < 1 {
		return nil, fmt.Errorf("%w: dbscan needs min samples >= 1, got %d", ErrBadInput, p.MinSamples)
	}
	return &DBSCAN{p}, nil
}

// Name implements Clusterer.
func (c *DBSCAN) Name() string { return "dbscan" }

// Cluster implements Clusterer.
func (c *DBSCAN) Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error) {
	if err := checkData(x); err != nil {
		return nil, err
	}
	nb, err := radiusNeighbors(ctx, x, c.p.Eps, c.p.Threads)
	if err != nil {
		return nil, err
	}
	n := x.Rows
	core := make([]bool, n)
	for i, l := range nb {
		core[i] = len(l) >= c.p.MinSamples
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = Noise
	}
	next := int32(0)
	var stack []int32
	for i := 0; i < n; i++ {
		if labels[i] != Noise || !core[i] {
			continue
		}
		labels[i] = next
		stack = append(stack[:0], int32(i))
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, q := range nb[p] {
				if labels[q] == Noise {
					labels[q] = next
					if core[q] {
						stack = append(stack, q)
					}
				}
			}
		}
		next++
	}
	return relabel(labels), nil
}

// radiusNeighbors returns, for every row i, the ascending indices j (i
// included) with ‖x_i − x_j‖ ≤ eps. Rows are processed in blocks of 64 ×
// 64: a float32 expansion ‖x_i‖² + ‖x_j‖² − 2⟨x_i, x_j⟩ screens pairs with
// a relative slack of 1e-4, and the survivors are confirmed with the exact
// float64 distance, so membership is exact (not subject to float32
// rounding). Time O(N²·D), parallel over row blocks; results do not depend
// on the thread count.
func radiusNeighbors(ctx context.Context, x mat32.Matrix, eps float64, threads int) ([][]int32, error) {
	n := x.Rows
	eps2 := eps * eps
	norms := make([]float32, n)
	for i := range norms {
		var s float32
		for _, v := range x.Row(i) {
			s += v * v
		}
		norms[i] = s
	}
	const blk = 64
	nblocks := (n + blk - 1) / blk
	out := make([][]int32, n)
	err := parallel.Blocks(ctx, threads, nblocks, func() struct{} { return struct{}{} }, func(_ struct{}, b int) error {
		i0, i1 := b*blk, min((b+1)*blk, n)
		for j0 := 0; j0 < n; j0 += blk {
			j1 := min(j0+blk, n)
			for i := i0; i < i1; i++ {
				xi := x.Row(i)
				ni := float64(norms[i])
				for j := j0; j < j1; j++ {
					nj := float64(norms[j])
					e := ni + nj - 2*float64(dot32(xi, x.Row(j)))
					if e > eps2+1e-4*(ni+nj+eps2) {
						continue
					}
					if sqDist64(xi, x.Row(j)) <= eps2 {
						out[i] = append(out[i], int32(j))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// dot32 is a float32 dot product with four accumulators.
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
