package knn

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// MeanPairwiseL2 returns the mean Euclidean distance over the n(n−1)/2
// distinct pairs of rows of x, (2/(n(n−1))) Σ_{i<j} ‖x_i − x_j‖, and NaN for
// n < 2.
//
// It runs the same blocked micro-kernel as Exact (squared distances by the
// norm expansion ‖a‖² + ‖b‖² − 2a·b in float32, clamped at 0) and reduces
// every 6×16 group on the fly (in an order that does not depend on the
// kernel's width), so memory is one packed copy of x and the
// cost is the n²·D/2 GEMM (π_inter of Roth et al. 2020 §5 over 11 316 SOP class
// means: about 0.1 s instead of seconds for a scalar loop). Square roots and
// sums are float64. The result is deterministic: each 6-row block's partial
// sum is computed by one worker and the partials are added in block order.
func MeanPairwiseL2(ctx context.Context, x mat32.Matrix, threads int) (float64, error) {
	return meanPairwiseL2(ctx, x, threads, activeKernel())
}

// meanPairwiseL2 is MeanPairwiseL2 with the kernel ki (tests run each).
func meanPairwiseL2(ctx context.Context, x mat32.Matrix, threads int, ki kernelImpl) (float64, error) {
	n, d := x.Rows, x.Cols
	if n < 0 || d < 0 || len(x.Data) != n*d {
		return 0, fmt.Errorf("%w: matrix %d×%d holds %d values", ErrBadInput, n, d, len(x.Data))
	}
	if n < 2 {
		return math.NaN(), nil
	}
	kern, nr := ki.fn, ki.nr
	npan := (n + nr - 1) / nr
	bpack := alignedFloats(npan * nr * d)
	parallel.For(threads, npan, func(p int) { packPanel(bpack[p*nr*d:], x, p*nr, nr) })
	nx := sqNorms(x, npan*nr)
	noCol := make([]float32, nrMax)
	for i := range noCol {
		noCol[i] = negInf
	}
	nblk := (n + mr - 1) / mr
	partial := make([]float64, nblk)
	type scratch struct {
		apack []float32
		ep    *kernEpi
	}
	err := parallel.Blocks(ctx, threads, nblk, func() scratch {
		sc := scratch{apack: alignedFloats(mr * d), ep: new(kernEpi)}
		sc.ep.scale, sc.ep.lo = fill8(-2), fill8(0)
		sc.ep.thr = fill8(negInf) // no lane needs a mask
		sc.ep.cthr = &noCol[0]
		return sc
	}, func(sc scratch, b int) error {
		apack, ep := sc.apack, sc.ep
		i0 := b * mr
		packPanel(apack, x, i0, mr)
		clear(ep.nq[:])
		copy(ep.nq[:mr], nx[i0:min(i0+mr, len(nx))])
		s := 0.0
		for jp := i0 / nr; jp < npan; jp++ {
			ep.nx = &nx[jp*nr]
			kern(ptrAt(apack, 0), ptrAt(bpack, jp*nr*d), d, ep)
			// Reduce by groups of 16 columns in ascending order whatever
			// nr is, so every kernel adds the same terms in the same order.
			for g := 0; g < nr; g += sumGroup {
				j0 := jp*nr + g
				if j0 >= i0+mr && j0+sumGroup <= n && i0+mr <= n {
					s += sqrtSumGroup(ep.c[g:], nr) // interior group: every pair counts
					continue
				}
				for r := 0; r < mr && i0+r < n; r++ {
					// pairs (i, j) with i < j < n only
					for j := max(i0+r+1, j0) - j0; j < sumGroup && j0+j < n; j++ {
						s += math.Sqrt(float64(ep.c[r*nr+g+j]))
					}
				}
			}
		}
		partial[b] = s
		return nil
	})
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, s := range partial {
		total += s
	}
	nf := float64(n)
	return total / (nf * (nf - 1) / 2), nil
}

// sumGroup is the column width of the reduction groups of MeanPairwiseL2
// (the narrowest kernel's nr).
const sumGroup = 16

// sqrtSumGroup is Σ √c over the 6×16 group whose rows start at c[r·stride]
// with four independent chains (column j feeds chain j mod 4).
func sqrtSumGroup(c []float32, stride int) float64 {
	var s0, s1, s2, s3 float64
	for r := 0; r < mr; r++ {
		row := c[r*stride : r*stride+sumGroup]
		for j := 0; j < sumGroup; j += 4 {
			s0 += math.Sqrt(float64(row[j]))
			s1 += math.Sqrt(float64(row[j+1]))
			s2 += math.Sqrt(float64(row[j+2]))
			s3 += math.Sqrt(float64(row[j+3]))
		}
	}
	return (s0 + s1) + (s2 + s3)
}
