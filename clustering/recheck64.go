package clustering

import (
	"context"
	"math"

	"github.com/dmlbench/dmlbench/internal/exactdist"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/knn"
)

// Recheck64 makes a nearest-centroid assignment computed in float32 equal
// to the exact one wherever rounding could have decided it, and returns
// the number of rows it ranked again exactly (roundingRows finds them; the
// exact order is internal/exactdist's: float64 with an error bound, ties
// settled in integer arithmetic, equal distances to the lower index).
// Rows whose float32 decision is clear — all of them on ordinary
// embeddings — keep theirs, so the assignment changes only where
// rounding, not the data, chose the centroid; every kernel level gives
// the same result.
func Recheck64(ctx context.Context, x, cent mat32.Matrix, assign []int32, threads int) (int, error) {
	rows, err := roundingRows(ctx, x, cent, assign, threads)
	if err != nil {
		return 0, err
	}
	parallel.For(threads, len(rows), func(r int) {
		i := rows[r]
		rk := exactdist.Ranker{Kind: exactdist.SquaredL2, X: x.Row(i), Row: func(id int32) []float32 { return cent.Row(int(id)) }}
		best := rk.Cand(0)
		for j := 1; j < cent.Rows; j++ {
			if c := rk.Cand(int32(j)); rk.Compare(c, best) < 0 {
				best = c
			}
		}
		assign[i] = best.ID
	})
	return len(rows), nil
}

// roundingRows returns the rows whose float32 nearest centroid assign
// rounding could have decided.
//
// A float32 squared distance ‖x‖² + ‖c‖² − 2⟨x, c⟩ over D dimensions is
// off from the exact one by at most
//
//	e(x, c) = (D + 4)·u·(‖x‖ + ‖c‖)² + (D + 4)·2⁻¹⁴⁴,  u = 2⁻²⁴
//
// (see metrics' recheck for the derivation; the second term covers
// underflow). A row within half the distance from its centroid to the
// nearest other centroid (Elkan 2003) is certain at once. For the others
// a k = 2 float32 search of the rows against the centroids (knn.Exact)
// gives each row's best and second-best values d₁, d₂. The assigned
// centroid a is certainly the exact nearest when it is the search's first
// and d₂ − d₁ > e(x, c_a) + e_o, e_o bounding the error of every other
// centroid that could beat a: such a centroid has ‖c‖ ≤ ‖x‖ + √(d₁ +
// e(x, c_a)). Every other row is returned.
func roundingRows(ctx context.Context, x, cent mat32.Matrix, assign []int32, threads int) ([]int, error) {
	k, d := cent.Rows, x.Cols
	if k < 2 || x.Rows == 0 {
		return nil, nil
	}
	cn, cMax, bound, cc, err := centroidBounds(ctx, cent, d, threads)
	if err != nil {
		return nil, err
	}
	// sep[a] ≤ min_{j≠a} ‖c_a − c_j‖²: a row with 4‖x − c_a‖² < sep[a] is
	// nearer to c_a than to any other centroid (triangle inequality),
	// whatever the rounding; the float64 distance's own error bound
	// (exactdist.L2) is added.
	sep := make([]float64, k)
	for j := range sep {
		sep[j] = max(float64(cc.Dist[j])-bound(cn[j], cMax), 0) * (1 - 0x1p-30)
	}
	var open []int
	for i, a := range assign {
		v, e := exactdist.L2(x.Row(i), cent.Row(int(a)))
		if 4*(v+e) >= sep[a] {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	sub := mat32.Matrix{Rows: len(open), Cols: d, Data: make([]float32, 0, len(open)*d)}
	for _, i := range open {
		sub.Data = append(sub.Data, x.Row(i)...)
	}
	nb, err := knn.Exact{}.Search(ctx, sub, cent, 2, knn.Options{Metric: knn.L2, Threads: threads})
	if err != nil {
		return nil, err
	}
	uncertain := make([]bool, len(open))
	parallel.For(threads, len(open), func(r int) {
		i := open[r]
		a := assign[i]
		ids, dv := nb.IDsOf(r), nb.DistOf(r)
		var xn float64
		for _, v := range x.Row(i) {
			xn += float64(v) * float64(v)
		}
		xn = math.Sqrt(xn)
		ea := bound(xn, cn[a])
		d1, d2 := float64(dv[0]), float64(dv[1])
		eo := bound(xn, min(cMax, xn+math.Sqrt(max(d1+ea, 0))))
		uncertain[r] = ids[0] != a || !(d2-d1 > ea+eo)
	})
	var rows []int
	for r, u := range uncertain {
		if u {
			rows = append(rows, open[r])
		}
	}
	return rows, nil
}

// centroidBounds returns the centroids' norms and their largest, the
// float32 rounding bound e(a, b) of a distance between rows of norms a and
// b, and each centroid's nearest other centroid (a float32 search).
func centroidBounds(ctx context.Context, cent mat32.Matrix, d, threads int) ([]float64, float64, func(a, b float64) float64, *knn.Neighbors, error) {
	cn := make([]float64, cent.Rows)
	cMax := 0.0
	for j := range cn {
		var s float64
		for _, v := range cent.Row(j) {
			s += float64(v) * float64(v)
		}
		cn[j] = math.Sqrt(s)
		cMax = max(cMax, cn[j])
	}
	gamma := float64(d+4) * 0x1p-24
	bound := func(a, b float64) float64 {
		s := a + b
		return gamma*s*s + gamma*0x1p-120
	}
	cc, err := knn.Exact{}.Search(ctx, cent, cent, 1, knn.Options{Metric: knn.L2, Exclude: knn.ExcludeSelf, Threads: threads})
	return cn, cMax, bound, cc, err
}
