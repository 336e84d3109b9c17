package clustering

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// refTie is the exact reference's verdict on one row.
type refTie struct{ within, tied bool }

// refTies decides, for every row i assigned to centroid a, whether some
// other centroid j (bitwise-equal ones included) has D_j − D_a ≤ E_a + E_j
// (within rounding) and, among those, D_j − D_a ≤ 2⁻²³·((‖x‖+‖c_a‖)² +
// (‖x‖+‖c_j‖)²) (tied), with E = (D+4)·2⁻²⁴·(‖x‖+‖c‖)² + (D+4)·2⁻¹⁴⁴;
// a pair of exact pairs (every coordinate of x, c_a and c_j a multiple of
// 2^q, (‖x‖+‖c‖)² < 2^(24+2q)) is never within rounding. The squared
// distances are summed in float64 in index order; a comparison whose
// float64 error could decide it is redone exactly in big.Float.
func refTies(x, cent mat32.Matrix, assign []int32) []refTie {
	d := x.Cols
	out := make([]refTie, x.Rows)
	zero := make([]float32, d)
	norm := func(v []float32) float64 { return math.Sqrt(knn.SquaredL2(v, zero)) }
	e := func(a, b float64) float64 {
		s := a + b
		return float64(d+4)*math.Ldexp(1, -24)*s*s + float64(d+4)*math.Ldexp(1, -144)
	}
	for i, a := range assign {
		xi, ca := x.Row(i), cent.Row(int(a))
		xn, an := norm(xi), norm(ca)
		exactA := refExact(xi, ca, xn, an)
		da := knn.SquaredL2(xi, ca)
		for j := 0; j < cent.Rows; j++ {
			cj := cent.Row(j)
			if j == int(a) {
				continue
			}
			jn := norm(cj)
			if exactA && refExact(xi, cj, xn, jn) {
				continue
			}
			dj := knn.SquaredL2(xi, cj)
			if refLE(xi, cj, ca, dj-da, e(xn, an)+e(xn, jn)) {
				out[i].within = true
				sa, sj := xn+an, xn+jn
				if refLE(xi, cj, ca, dj-da, math.Ldexp(sa*sa+sj*sj, -23)) {
					out[i].tied = true
				}
			}
		}
	}
	return out
}

// refLE reports whether ‖x − cj‖² − ‖x − ca‖² ≤ bound, given the float64
// estimate g of the difference: decided in float64 when the estimate's
// error bound ((D+3)·2⁻⁵² of each sum) keeps it apart, else exactly.
func refLE(x, cj, ca []float32, g, bound float64) bool {
	err := float64(len(x)+3) * math.Ldexp(1, -52) * (knn.SquaredL2(x, cj) + knn.SquaredL2(x, ca)) * 2
	if g+err <= bound {
		return true
	}
	if g-err > bound {
		return false
	}
	exact := func(c []float32) *big.Float {
		s := new(big.Float).SetPrec(4096)
		for t := range x {
			e := new(big.Float).SetPrec(4096).SetFloat64(float64(x[t]))
			e.Sub(e, new(big.Float).SetPrec(4096).SetFloat64(float64(c[t])))
			s.Add(s, e.Mul(e, e))
		}
		return s
	}
	diff := exact(cj)
	diff.Sub(diff, exact(ca))
	return diff.Cmp(new(big.Float).SetFloat64(bound)) <= 0
}

// refExact reports whether every coordinate of x and c is a multiple of
// 2^q with (‖x‖ + ‖c‖)² < 2^(24+2q), q ≥ −74, found by trying q.
func refExact(x, c []float32, xn, cn float64) bool {
	for q := 40; q >= -74; q-- {
		ok := true
		for _, v := range append(append([]float32(nil), x...), c...) {
			f := math.Ldexp(float64(v), -q)
			if f != math.Trunc(f) {
				ok = false
				break
			}
		}
		if ok {
			s := xn + cn
			return s*s < math.Ldexp(1, 24+2*q)*(1-1e-12)
		}
	}
	return false
}

// nearTieCases are data sets rich in near-ties: initial centroids 1 ulp
// apart, integer rows (exact ties, exact arithmetic), an integer grid,
// and ordinary Gaussian classes.
func nearTieCases() []struct {
	name string
	x    mat32.Matrix
	k    int
} {
	rng := rand.New(rand.NewSource(7))
	ints := func(n, d, v int) mat32.Matrix {
		x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
		for i := 0; i < n; i++ {
			c := rng.Intn(10)
			for t := 0; t < d; t++ {
				x.Data[i*d+t] = float32(rng.Intn(v) + c*(t%2))
			}
		}
		return x
	}
	gauss := mat32.Matrix{Rows: 900, Cols: 16, Data: make([]float32, 900*16)}
	for i := 0; i < gauss.Rows; i++ {
		for t := 0; t < 16; t++ {
			gauss.Data[i*16+t] = float32(float64(i%30)*0.3*float64(t%3) + rng.NormFloat64())
		}
	}
	grid, _ := integerGrid(10, 3)
	return []struct {
		name string
		x    mat32.Matrix
		k    int
	}{
		{"ulp20x40", ulpClusters(20, 40, 8), 20},
		{"ulp48x10", ulpClusters(48, 10, 8), 48},
		{"int1500x32", ints(1500, 32, 4), 40},
		{"grid10^3", grid, 10},
		{"gauss900x16", gauss, 30},
	}
}

// integerGrid is the grid {0, …, side−1}^d, labelled by the first
// coordinate halved.
func integerGrid(side, d int) (mat32.Matrix, []int32) {
	n := 1
	for i := 0; i < d; i++ {
		n *= side
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	lab := make([]int32, n)
	for i := 0; i < n; i++ {
		v := i
		for t := 0; t < d; t++ {
			x.Data[i*d+t] = float32(v % side)
			v /= side
		}
		lab[i] = int32(x.Data[i*d] / 2)
	}
	return x, lab
}

// TestNearTiesExactReference: for every pass of k-means (the pass m
// centroids and assignment are those of a run with NIter = m), the rows
// the check finds within rounding and tied are exactly the reference's
// (refTies), alone and inside KMeans (RoundingPasses, RoundingRows,
// TiedRows), with pruned passes (groups of one panel, whose own-group
// bound Yinyang keeps, and of two, which the check screens itself), full
// passes and any thread count: the verdict depends only on the data.
func TestNearTiesExactReference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const niter = 8
	for _, c := range nearTieCases() {
		opt, err := KMeansPreset("roth")
		if err != nil {
			t.Fatal(err)
		}
		opt.NIter = niter
		var want []int
		anyWithin := make([]bool, c.x.Rows)
		anyTied := make([]bool, c.x.Rows)
		for m := 0; m <= niter; m++ {
			o := opt
			o.NIter = m
			r, err := KMeans(ctx, c.x, c.k, o)
			if err != nil {
				t.Fatal(err)
			}
			ref := refTies(c.x, r.Centroids, r.Assign)
			// The check alone, without Yinyang bounds.
			assign, dist, err := NearestCentroids(ctx, c.x, r.Centroids, 2)
			if err != nil {
				t.Fatal(err)
			}
			nt := &nearTies{}
			if _, err := nt.check(ctx, c.x, r.Centroids.Data, c.k, assign, dist, nil, 2); err != nil {
				t.Fatal(err)
			}
			count := 0
			for i, rt := range ref {
				if nt.hit[i] != rt.within || (nt.tie[i] >= 0) != rt.tied {
					t.Errorf("%s pass %d row %d: within %v tied %v, reference %v %v", c.name, m, i, nt.hit[i], nt.tie[i] >= 0, rt.within, rt.tied)
				}
				if rt.within {
					count++
					anyWithin[i] = true
				}
				anyTied[i] = anyTied[i] || rt.tied
			}
			want = append(want, count)
		}
		rows, tied := 0, 0
		for i := range anyWithin {
			if anyWithin[i] {
				rows++
			}
			if anyTied[i] {
				tied++
			}
		}
		t.Logf("%s: %d rows within rounding (%d tied), per pass %v", c.name, rows, tied, want)
		for _, v := range []struct {
			full         bool
			threads, grp int
		}{{false, 1, 0}, {false, 3, 0}, {false, 2, 32}, {true, 2, 0}} {
			o := opt
			o.fullPasses, o.Threads, o.groupSize = v.full, v.threads, v.grp
			r, err := KMeans(ctx, c.x, c.k, o)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.RoundingPasses) != fmt.Sprint(want) || r.RoundingRows != rows || r.TiedRows != tied {
				t.Errorf("%s (full passes %v, %d threads): passes %v, rows %d, tied %d; reference %v, %d, %d", c.name, v.full, v.threads, r.RoundingPasses, r.RoundingRows, r.TiedRows, want, rows, tied)
			}
		}
	}
}

// TestNearTiesSubsampleAndNoIterations: with a training sample the final
// pass over all rows is checked on its own rows (counted apart from the
// sample's), and a run without iterations (K = n) checks its one pass.
func TestNearTiesSubsampleAndNoIterations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x := ulpClusters(20, 40, 8)
	opt, err := KMeansPreset("pml")
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxPointsPerCentroid = 20 // 400 of the 800 rows train
	r, err := KMeans(ctx, x, 20, opt)
	if err != nil {
		t.Fatal(err)
	}
	last := r.RoundingPasses[len(r.RoundingPasses)-1]
	ref := refTies(x, r.Centroids, r.Assign)
	want := 0
	for _, v := range ref {
		if v.within {
			want++
		}
	}
	if r.TrainPoints != 400 || len(r.RoundingPasses) != opt.NIter+1 || last != want || r.RoundingRows < last || len(r.TiedPairs) != x.Rows {
		t.Errorf("subsampled: %d training rows, passes %v, final pass %d (reference %d), rows %d, %d tied pairs", r.TrainPoints, r.RoundingPasses, last, want, r.RoundingRows, len(r.TiedPairs))
	}
	// Rows 1 and 2 are equal, and not small dyadic numbers: the two
	// centroids they become are bitwise equal, and both rows are tied.
	small := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{0, 0, 0.1, 0.3, 0.1, 0.3}}
	r, err = KMeans(ctx, small, 3, opt)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.RoundingPasses) != "[2]" || r.RoundingRows != 2 || r.TiedRows != 2 {
		t.Errorf("K = n with two equal rows: passes %v, rows %d, tied %d; want [2], 2, 2", r.RoundingPasses, r.RoundingRows, r.TiedRows)
	}
	// Small integers are computed exactly in any order: equal distances
	// are equal everywhere and go to the lower index; no row is tied.
	ints := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{0, 0, 1, 3, 1, 3}}
	if r, err = KMeans(ctx, ints, 3, opt); err != nil || r.RoundingRows != 0 {
		t.Errorf("K = n with two equal integer rows: %v, passes %v", err, r.RoundingPasses)
	}
}
