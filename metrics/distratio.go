package metrics

import (
	"context"
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// maxIntraMembers caps the members per class used for the exact intra-class
// mean distance; larger classes are subsampled (seeded) and a warning says so.
const maxIntraMembers = 2000

// distRatio returns π_ratio = π_intra / π_inter (Roth et al. 2020 §5): π_intra is
// the mean over classes with ≥ 2 members of the mean distance between
// distinct members, π_inter the mean distance between distinct class means.
// cosine selects d = 1 − cos; otherwise d is Euclidean. Under cosine the
// class means are those of the L2-normalised rows, or, with rawMeans, of
// the rows as given, as Roth et al.'s metrics/dists.py computes them
// (mode intra_over_inter: normalize(np.mean(features[loc]))). Cosine sums
// have a closed form in O(N·D): Σ_{i≠j} (1 − x̂_i·x̂_j) = n(n−1) − (‖Σx̂‖² − n).
// It cancels when the rows nearly coincide, so a mean below
// cosineCancelBelow is recomputed as Σ_{i≠j} ‖x̂_i − x̂_j‖²/2 = n Σ_i ‖x̂_i − m‖²
// (m the mean of the x̂_i), which has no cancellation.
//
// Under cosine a zero row has no direction, so the cosine distance to it,
// and the ratio, are undefined: NaN with a warning naming the first such
// row (as every undefined value is reported; --distance cosine refuses zero
// rows before any search). When every class mean has the same direction
// (π_inter = 0, e.g. all rows equal) the ratio is undefined too.
func distRatio(x mat32.Matrix, labels []int32, classes int, cosine, rawMeans bool, seed int64, threads int) (float64, []string, error) {
	var warn []string
	if cosine {
		if i := firstZeroRow(x); i >= 0 {
			return math.NaN(), []string{fmt.Sprintf("dist_ratio: undefined, row %d is a zero vector, whose cosine distance to any row is undefined", i)}, nil
		}
	}
	members := make([][]int, classes)
	for i, y := range labels {
		members[y] = append(members[y], i)
	}
	d := x.Cols
	rows := x
	if cosine {
		rows = normalizedCopy(x)
	}
	rng := rand.New(rand.NewSource(seed))
	intraSum, intraN := 0.0, 0
	means := make([]float64, 0, classes*d)
	sub := 0
	for _, m := range members {
		if len(m) == 0 {
			continue
		}
		mean := make([]float64, d)
		for _, i := range m {
			for t, v := range rows.Row(i) {
				mean[t] += float64(v)
			}
		}
		for t := range mean {
			mean[t] /= float64(len(m))
		}
		if cosine && rawMeans {
			raw := make([]float64, d)
			for _, i := range m {
				for t, v := range x.Row(i) {
					raw[t] += float64(v)
				}
			}
			for t := range raw {
				raw[t] /= float64(len(m))
			}
			means = append(means, raw...)
		} else {
			means = append(means, mean...)
		}
		if len(m) < 2 {
			continue
		}
		n := float64(len(m))
		if cosine {
			// mean holds the class's mean of the normalised rows.
			s2 := 0.0
			for _, v := range mean {
				s2 += v * v * n * n
			}
			v := (n*(n-1) - (s2 - n)) / (n * (n - 1))
			if v < cosineCancelBelow {
				v = meanCosineSpread(rows, m, mean)
			}
			intraSum += v
		} else {
			mm := m
			if len(mm) > maxIntraMembers {
				mm = append([]int(nil), m...)
				rng.Shuffle(len(mm), func(a, b int) { mm[a], mm[b] = mm[b], mm[a] })
				mm = mm[:maxIntraMembers]
				sub++
			}
			intraSum += meanPairwiseEuclid(rows, mm)
		}
		intraN++
	}
	if sub > 0 {
		warn = append(warn, "dist_ratio: classes larger than 2000 items were subsampled to 2000 for the intra-class mean")
	}
	c := len(means) / d
	if intraN == 0 || c < 2 {
		return math.NaN(), append(warn, "dist_ratio: needs at least one class with two members and two classes"), nil
	}
	var inter float64
	if cosine {
		unit := unitRows(means, c, d)
		sum := make([]float64, d)
		for k := 0; k < c; k++ {
			for t, v := range unit[k*d : (k+1)*d] {
				sum[t] += v
			}
		}
		s2 := 0.0
		for _, v := range sum {
			s2 += v * v
		}
		cf := float64(c)
		inter = (cf*(cf-1) - (s2 - cf)) / (cf * (cf - 1))
		if inter < cosineCancelBelow {
			inter = meanCosineSpreadOfUnit(unit, c, d)
		}
	} else {
		inter = meanPairwiseRows(means, c, d, threads)
	}
	if inter == 0 {
		return math.NaN(), append(warn, "dist_ratio: undefined, the class means do not differ (mean distance between them is 0)"), nil
	}
	return (intraSum / float64(intraN)) / inter, warn, nil
}

// cosineCancelBelow: a mean cosine distance from the closed form below this
// is recomputed without cancellation (the closed form's rounding error is
// about n²·2⁻⁵² of n(n−1), far below it).
const cosineCancelBelow = 1e-6

// meanCosineSpread is the mean of 1 − x̂_i·x̂_j over distinct members m of a
// class, from the rows x̂ (L2-normalised) and their mean: n Σ_i ‖x̂_i − mean‖²
// / (n(n−1)).
func meanCosineSpread(rows mat32.Matrix, m []int, mean []float64) float64 {
	s := 0.0
	for _, i := range m {
		for t, v := range rows.Row(i) {
			e := float64(v) - mean[t]
			s += e * e
		}
	}
	n := float64(len(m))
	return n * s / (n * (n - 1))
}

// unitRows returns the c rows of x (row-major, d columns) each divided by
// its L2 norm; an all-zero row stays zero.
func unitRows(x []float64, c, d int) []float64 {
	unit := make([]float64, len(x))
	for k := 0; k < c; k++ {
		xk := x[k*d : (k+1)*d]
		nrm := 0.0
		for _, v := range xk {
			nrm += v * v
		}
		nrm = math.Sqrt(nrm)
		if nrm == 0 {
			nrm = 1
		}
		for t, v := range xk {
			unit[k*d+t] = v / nrm
		}
	}
	return unit
}

// meanCosineSpreadOfUnit is meanCosineSpread over c unit rows (the
// L2-normalised class means, row-major in unit).
func meanCosineSpreadOfUnit(unit []float64, c, d int) float64 {
	mu := make([]float64, d)
	for k := 0; k < c; k++ {
		for t, v := range unit[k*d : (k+1)*d] {
			mu[t] += v / float64(c)
		}
	}
	s := 0.0
	for k := 0; k < c; k++ {
		for t := 0; t < d; t++ {
			e := unit[k*d+t] - mu[t]
			s += e * e
		}
	}
	cf := float64(c)
	return cf * s / (cf * (cf - 1))
}

// firstZeroRow returns the index of the first all-zero row of x, or −1.
func firstZeroRow(x mat32.Matrix) int {
	for i := 0; i < x.Rows; i++ {
		zero := true
		for _, v := range x.Row(i) {
			if v != 0 {
				zero = false
				break
			}
		}
		if zero {
			return i
		}
	}
	return -1
}

func normalizedCopy(x mat32.Matrix) mat32.Matrix {
	out := mat32.Matrix{Rows: x.Rows, Cols: x.Cols, Data: make([]float32, len(x.Data))}
	for i := 0; i < x.Rows; i++ {
		r := x.Row(i)
		s := 0.0
		for _, v := range r {
			s += float64(v) * float64(v)
		}
		s = math.Sqrt(s)
		o := out.Row(i)
		if s == 0 {
			copy(o, r)
			continue
		}
		for t, v := range r {
			o[t] = float32(float64(v) / s)
		}
	}
	return out
}

func meanPairwiseEuclid(x mat32.Matrix, idx []int) float64 {
	sum := 0.0
	for a := 0; a < len(idx); a++ {
		ra := x.Row(idx[a])
		for b := a + 1; b < len(idx); b++ {
			sum += math.Sqrt(sqDist32(ra, x.Row(idx[b])))
		}
	}
	n := float64(len(idx))
	return sum / (n * (n - 1) / 2)
}

func sqDist32(a, b []float32) float64 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return float64(s0 + s1 + s2 + s3)
}

// meanPairwiseRows is the mean Euclidean distance over distinct pairs of the
// c rows of m (float64, row-major; rounded to float32 for the blocked kernel).
func meanPairwiseRows(m []float64, c, d, threads int) float64 {
	m32 := make([]float32, len(m))
	for i, v := range m {
		m32[i] = float32(v)
	}
	v, err := knn.MeanPairwiseL2(context.Background(), mat32.Matrix{Rows: c, Cols: d, Data: m32}, threads)
	if err != nil {
		return math.NaN()
	}
	return v
}
