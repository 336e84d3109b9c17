package clustering

import (
	"context"
	"math"

	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/mat32"
)

// Recheck64 makes a nearest-centroid assignment computed in float32 equal
// to the exact one wherever rounding could have decided it, and returns
// the number of rows it ranked again in float64.
//
// A float32 squared distance ‖x‖² + ‖c‖² − 2⟨x, c⟩ over D dimensions is
// off from the exact one by at most
//
//	e(x, c) = (D + 4)·u·(‖x‖ + ‖c‖)² + (D + 4)·u·2⁻¹²⁰,  u = 2⁻²⁴
//
// (Higham 2002, §3.1, on the three terms; the second term covers
// subnormal results). A k = 2 float32 search of the rows against the
// centroids (knn.Exact) gives each row's best and second-best values d₁,
// d₂. The assigned centroid a is certainly the exact nearest when it is the
// search's first and d₂ − d₁ > e(x, c_a) + e_o, e_o bounding the error of
// every other centroid that could beat a: such a centroid has
// ‖c‖ ≤ ‖x‖ + √(d₁ + e(x, c_a)). Every other row is reassigned to its
// nearest centroid in float64 (differences squared and summed in index
// order, ties to the lower index), which on every kernel level gives the
// same bits. Rows whose float32 decision is clear — all of them on
// ordinary embeddings — keep theirs, so the assignment changes only where
// rounding, not the data, chose the centroid.
func Recheck64(ctx context.Context, x, cent mat32.Matrix, assign []int32, threads int) (int, error) {
	k := cent.Rows
	if k < 2 || x.Rows == 0 {
		return 0, nil
	}
	nb, err := knn.Exact{}.Search(ctx, x, cent, 2, knn.Options{Metric: knn.L2, Threads: threads})
	if err != nil {
		return 0, err
	}
	cn := make([]float64, k)
	cMax := 0.0
	for j := range cn {
		var s float64
		for _, v := range cent.Row(j) {
			s += float64(v) * float64(v)
		}
		cn[j] = math.Sqrt(s)
		cMax = max(cMax, cn[j])
	}
	gamma := float64(x.Cols+4) * 0x1p-24
	bound := func(xn, c float64) float64 {
		s := xn + c
		return gamma*s*s + gamma*0x1p-120
	}
	uncertain := make([]bool, x.Rows)
	parallel.For(threads, x.Rows, func(i int) {
		a := assign[i]
		ids, d := nb.IDsOf(i), nb.DistOf(i)
		var xn float64
		for _, v := range x.Row(i) {
			xn += float64(v) * float64(v)
		}
		xn = math.Sqrt(xn)
		ea := bound(xn, cn[a])
		d1, d2 := float64(d[0]), float64(d[1])
		eo := bound(xn, min(cMax, xn+math.Sqrt(max(d1+ea, 0))))
		uncertain[i] = ids[0] != a || !(d2-d1 > ea+eo)
	})
	var rows []int
	for i, u := range uncertain {
		if u {
			rows = append(rows, i)
		}
	}
	parallel.For(threads, len(rows), func(r int) {
		i := rows[r]
		best, bj := math.Inf(1), int32(0)
		for j := 0; j < k; j++ {
			if s := knn.SquaredL2(x.Row(i), cent.Row(j)); s < best {
				best, bj = s, int32(j)
			}
		}
		assign[i] = bj
	})
	return len(rows), nil
}
