package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dmlbench/dmlbench/clustering"
)

// KMeansRounding is the JSON record of the k-means assignments float32
// rounding could have decided (clustering.KMeansResult: RoundingRows,
// TiedRows, RoundingPasses), with their estimated effect on NMI.
type KMeansRounding struct {
	// Rows were assigned, in some pass, within the rigorous float32
	// rounding bound of another centroid (any summation order).
	Rows int `json:"rows"`
	// TiedRows of them were within the rounding of the distance formula's
	// last two operations: the decisions another implementation (faiss's
	// BLAS) is likely to take otherwise.
	TiedRows int `json:"tied_rows"`
	// Passes holds each assignment pass's rows within the bound (the
	// training passes, then the final assignment); absent when Rows is 0.
	Passes []int `json:"passes,omitempty"`
	// NMIShift is Σ |ΔNMI| over the tied rows, each moved alone from its
	// final cluster to the other centroid of its tie: the first-order
	// effect on NMI of those decisions going the other way.
	NMIShift float64 `json:"nmi_shift"`
}

// nmiShown is half a unit in the fourth decimal, the precision tables
// show NMI at: a smaller shift cannot change a shown digit by itself.
const nmiShown = 5e-5

// kmeansRounding records r's rounding counts in the result and, under the
// peers' conventions (whose k-means numbers are meant to be faiss's), warns
// when the tied rows' NMI shift reaches the shown precision, unless a
// float32 range warning already said that rounding decides. strict only
// records them: its reference is exactness, not faiss, and its final
// assignment is exact. labels and assign are the clustered rows' classes
// and final clusters.
func (e *evalRun) kmeansRounding(r *clustering.KMeansResult, labels, assign []int32) {
	if r.RoundingRows < 0 || r.RoundingPasses == nil {
		return
	}
	kr := &KMeansRounding{Rows: r.RoundingRows, TiedRows: r.TiedRows}
	if r.RoundingRows > 0 {
		kr.Passes = r.RoundingPasses
	}
	if r.TiedPairs != nil && len(r.TiedPairs) == len(assign) {
		kr.NMIShift = nmiMoveShift(labels, assign, r.TiedPairs)
	}
	e.res.KMeansRounding = kr
	if kr.NMIShift >= nmiShown && e.conv != Strict && !e.float32Warned() {
		e.res.Warnings = append(e.res.Warnings, fmt.Sprintf("k-means: %d rows were assigned between two centroids tied within float32 rounding (%d within the rigorous bound; per pass %v); faiss's k-means, which sums in its BLAS's order, may assign them otherwise and part from there: moved one at a time they shift NMI by %.1e in all, beyond the 4 digits shown (docs/metrics.md)", kr.TiedRows, kr.Rows, kr.Passes, kr.NMIShift))
	}
}

// nmiMoveShift returns Σ_i |NMI(assign with row i moved) − NMI(assign)|
// over the rows with a tie (pairs[i][1] ≥ 0), row i moving to whichever
// centroid of its tie is not its final cluster (none if both are). NMI is
// I/((H(Y) + H(Ω))/2) with natural logarithms; with f(m) = m·ln m and
// S_Y, S_Ω, S_YΩ the sums of f over the class, cluster and cell counts,
// I = ln n + (S_YΩ − S_Y − S_Ω)/n and H = ln n − S/n, so a move changes
// two cell and two cluster terms (O(1) per row).
func nmiMoveShift(labels, assign []int32, pairs [][2]int32) float64 {
	n := float64(len(assign))
	f := func(m int) float64 {
		if m <= 0 {
			return 0
		}
		return float64(m) * math.Log(float64(m))
	}
	cell := map[[2]int32]int{}
	clust := map[[2]int32]int{} // {cluster, 0}
	class := map[[2]int32]int{} // {class, 0}
	for i, a := range assign {
		cell[[2]int32{labels[i], a}]++
		clust[[2]int32{a}]++
		class[[2]int32{labels[i]}]++
	}
	// Sums in sorted key order: the same bits on every run.
	sy, sc, syc := sortedSum(class, f), sortedSum(clust, f), sortedSum(cell, f)
	ln := math.Log(n)
	nmi := func(syc, sc float64) float64 {
		hy, hc := ln-sy/n, ln-sc/n
		if hy+hc <= 0 {
			return 1
		}
		return (ln + (syc-sy-sc)/n) / ((hy + hc) / 2)
	}
	base := nmi(syc, sc)
	shift := 0.0
	for i, p := range pairs {
		if p[1] < 0 {
			continue
		}
		a, b := assign[i], p[1]
		if b == a {
			b = p[0]
		}
		if b == a {
			continue
		}
		y := labels[i]
		ma, mb := cell[[2]int32{y, a}], cell[[2]int32{y, b}]
		ca, cb := clust[[2]int32{a}], clust[[2]int32{b}]
		dyc := f(ma-1) - f(ma) + f(mb+1) - f(mb)
		dc := f(ca-1) - f(ca) + f(cb+1) - f(cb)
		shift += math.Abs(nmi(syc+dyc, sc+dc) - base)
	}
	return shift
}

// sortedSum returns Σ f(m[key]) added in ascending key order.
func sortedSum(m map[[2]int32]int, f func(int) float64) float64 {
	keys := make([][2]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int32) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	s := 0.0
	for _, k := range keys {
		s += f(m[k])
	}
	return s
}
