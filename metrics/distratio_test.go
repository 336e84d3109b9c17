package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// bruteCosineRatio is π_ratio with d = 1 − cos by its definition, as a
// loop over pairs: the mean over classes (≥ 2 members) of the mean over
// distinct pairs, over the mean over distinct pairs of the L2-normalised
// class means. The rows are L2-normalised as dmlbench stores them (float32,
// normalizedCopy), and 1 − cos of unit vectors is computed as ‖a − b‖²/2.
func bruteCosineRatio(x mat32.Matrix, y []int32, classes int) float64 {
	unit := func(v []float64) []float64 {
		n := 0.0
		for _, a := range v {
			n += a * a
		}
		n = math.Sqrt(n)
		out := make([]float64, len(v))
		for i, a := range v {
			out[i] = a / n
		}
		return out
	}
	dist := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += (a[i] - b[i]) * (a[i] - b[i])
		}
		return s / 2
	}
	xn := normalizedCopy(x)
	rows := make([][]float64, x.Rows)
	for i := range rows {
		r := make([]float64, x.Cols)
		for t, v := range xn.Row(i) {
			r[t] = float64(v)
		}
		rows[i] = r
	}
	intra, nIntra := 0.0, 0
	var means [][]float64
	for c := int32(0); c < int32(classes); c++ {
		var m []int
		for i, v := range y {
			if v == c {
				m = append(m, i)
			}
		}
		mean := make([]float64, x.Cols)
		for _, i := range m {
			for t, v := range rows[i] {
				mean[t] += v
			}
		}
		means = append(means, unit(mean))
		if len(m) < 2 {
			continue
		}
		s := 0.0
		for _, a := range m {
			for _, b := range m {
				if a != b {
					s += dist(rows[a], rows[b])
				}
			}
		}
		intra += s / float64(len(m)*(len(m)-1))
		nIntra++
	}
	inter := 0.0
	for a := range means {
		for b := range means {
			if a != b {
				inter += dist(means[a], means[b])
			}
		}
	}
	inter /= float64(len(means) * (len(means) - 1))
	return intra / float64(nIntra) / inter
}

func rowsOf(n, d int, f func(i, t int) float32) mat32.Matrix {
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := 0; i < n; i++ {
		for t := 0; t < d; t++ {
			x.Data[i*d+t] = f(i, t)
		}
	}
	return x
}

// Cosine: a zero row has no direction, so the cosine distance to it is
// undefined. dist_ratio under cosine (roth, or --distance cosine) is then
// undefined (NaN, with a warning naming the first zero row), and a
// --distance cosine search refuses the input, naming it.
func TestDistRatioCosineZeroRows(t *testing.T) {
	g := splitMix64(7)
	x := rowsOf(40, 8, func(i, _ int) float32 { return float32(g.next()%1000)/100 - 5 })
	y := make([]int32, 40)
	for i := range y {
		y[i] = int32(i % 4)
	}
	for _, i := range []int{7, 12, 13, 30, 39} { // five zero rows of 40
		copy(x.Row(i), make([]float32, 8))
	}
	r := eval(t, Input{Emb: x, Labels: y}, Options{Convention: Roth, Metrics: []string{"dist_ratio", "R@1"}})
	if v := r.Metrics["dist_ratio"]; !math.IsNaN(v) || !hasWarning(r, "row 7 is a zero vector") {
		t.Errorf("roth: dist_ratio = %v, warnings %q; want NaN naming row 7", v, r.Warnings)
	}
	for _, m := range []string{"dist_ratio", "R@1"} {
		_, err := Evaluate(t.Context(), Input{Emb: x, Labels: y}, Options{Distance: "cosine", Metrics: []string{m}})
		if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "row 7 is a zero vector") {
			t.Errorf("--distance cosine %s: err = %v, want the first zero row (7) named", m, err)
		}
	}
	// Euclidean distances are defined for zero rows.
	if _, err := Evaluate(t.Context(), Input{Emb: x, Labels: y}, Options{Metrics: []string{"dist_ratio", "R@1"}}); err != nil {
		t.Errorf("euclidean: %v", err)
	}
}

// Identical rows: every cosine distance is 0, so π_inter = 0 and the ratio
// is undefined (NaN, with a warning); the closed form Σ(1 − x̂_i·x̂_j) =
// n(n−1) − (‖Σx̂‖² − n) alone would leave rounding noise there and divide by it.
func TestDistRatioCosineIdenticalRows(t *testing.T) {
	x := rowsOf(40, 8, func(int, int) float32 { return 1 })
	y := make([]int32, 40)
	for i := range y {
		y[i] = int32(i % 2)
	}
	r := eval(t, Input{Emb: x, Labels: y}, Options{Convention: Roth, Metrics: []string{"dist_ratio"}})
	if v := r.Metrics["dist_ratio"]; !math.IsNaN(v) || !hasWarning(r, "class means do not differ") {
		t.Errorf("all-ones rows: dist_ratio = %v, warnings %v; want NaN with a warning", v, r.Warnings)
	}
}

// Nearly coincident rows: the closed form cancels; the recomputed mean
// matches the brute-force pair loop.
func TestDistRatioCosineNearlyCoincident(t *testing.T) {
	g := splitMix64(11)
	x := rowsOf(60, 6, func(i, t int) float32 {
		base := float32(1 + t)
		if i%3 == 0 {
			base += 0.5 // class 0 points a little elsewhere
		}
		return base + float32(g.next()%1000)*1e-6
	})
	y := make([]int32, 60)
	for i := range y {
		y[i] = int32(i % 3)
	}
	r := eval(t, Input{Emb: x, Labels: y}, Options{Distance: "cosine", Metrics: []string{"dist_ratio"}})
	want := bruteCosineRatio(x, y, 3)
	if got := r.Metrics["dist_ratio"]; math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("dist_ratio = %.12g, brute force %.12g", got, want)
	}
}
