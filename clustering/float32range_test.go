package clustering

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// transformed returns a·x + b elementwise, computed in float64 and rounded
// once to float32.
func transformed(x mat32.Matrix, a, b float64) mat32.Matrix {
	y := mat32.Matrix{Rows: x.Rows, Cols: x.Cols, Data: make([]float32, len(x.Data))}
	for i, v := range x.Data {
		y.Data[i] = float32(a*float64(v) + b)
	}
	return y
}

// TestFloat32RangeIssueInputs: the embeddings that silently score R@1 0.1
// and NMI 0 (scaled by 1e20 or 1e-30) and those whose float32 distance
// expansion cancels globally (offset +1e4; rows at ±500 with spread 1e-3)
// are flagged with the right diagnosis; the same embeddings unscaled,
// unit-normalised, all-positive, or all equal pass.
func TestFloat32RangeIssueInputs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(5))
	base := clusteredMatrix(rng, 800, 32, 10, 3)
	unit := transformed(base, 1, 0)
	for i := 0; i < unit.Rows; i++ {
		var s float64
		for _, v := range unit.Row(i) {
			s += float64(v) * float64(v)
		}
		for t := range unit.Row(i) {
			unit.Row(i)[t] /= float32(math.Sqrt(s))
		}
	}
	for _, c := range []struct {
		name string
		x    mat32.Matrix
		want string // "" = passes
	}{
		{"plain", base, ""},
		{"unit rows", unit, ""},
		{"relu-like (all positive, offset 3)", transformed(base, 1, 3*3), ""},
		{"all equal", transformed(base, 0, 7), ""},
		{"x1e20", transformed(base, 1e20, 0), "overflow"},
		{"x1e-30", transformed(base, 1e-30, 0), "underflow"},
		{"+1e4", transformed(base, 1, 1e4), "cancellation"},
		{"one class at ±500, spread 1e-3", classOffsets(rng, 800, 32, 1, 1e-3), "cancellation"},
		// Classes far apart pass: their cancellation is inside each class,
		// which KMeansResult.Float32Check catches.
		{"10 classes at ±500, spread 1e-3", classOffsets(rng, 800, 32, 10, 1e-3), ""},
	} {
		err := MeasureFloat32(c.x).Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrFloat32Range) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want %s", c.name, err, c.want)
		}
	}
	// A query set and its gallery are measured together: a gallery far
	// from the queries is a spread, not an offset.
	q, g := transformed(base, 1, 1e4), transformed(base, 1, -1e4)
	if err := MeasureFloat32(q, g).Check(); err != nil {
		t.Errorf("query +1e4, gallery −1e4: %v", err)
	}
}

// TestFloat32CancelThreshold: Gaussian clusters (4 000 rows, D = 64)
// shifted by a common offset and assigned to 80 of their own rows as
// centroids. The float32 kernel's assignment drifts from the float64 one
// as the offset grows (more than 5 % off at R²/s² ≈ 9·10⁴, where
// MeasureFloat32's cancellation test, which roth and pml report as a
// warning, fires); after Recheck64 no assignment differs at any offset,
// and it ranks few rows again where the data are near the origin (its
// bound is the worst case of the expansion's rounding).
func TestFloat32CancelThreshold(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	n, d, k := 4000, 64, 80
	base := clusteredMatrix(rng, n, d, 100, 3)
	for _, c := range []struct {
		off      float64
		flagged  bool
		minWrong float64 // fraction of float32 assignments off, at least
		maxRe    int     // rows Recheck64 may rank again, at most
	}{
		{0, false, 0, n / 1000},
		{30, false, 0, n / 20},
		{300, false, 0, n},
		{1000, true, 0.05, n},
		{3000, true, 0.3, n},
	} {
		x := transformed(base, 1, c.off)
		cent := mat32.Matrix{Rows: k, Cols: d, Data: x.Data[:k*d]}
		a, _, err := NearestCentroids(context.Background(), x, cent, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref := make([]int32, n)
		for i := 0; i < n; i++ {
			best, bj := knn.SquaredL2(x.Row(i), cent.Row(0)), 0
			for j := 1; j < k; j++ {
				if s := knn.SquaredL2(x.Row(i), cent.Row(j)); s < best {
					best, bj = s, j
				}
			}
			ref[i] = int32(bj)
		}
		wrong := 0
		for i := range ref {
			if ref[i] != a[i] {
				wrong++
			}
		}
		re, err := Recheck64(context.Background(), x, cent, a, 2)
		if err != nil {
			t.Fatal(err)
		}
		after := 0
		for i := range ref {
			if ref[i] != a[i] {
				after++
			}
		}
		r := MeasureFloat32(x)
		f := float64(wrong) / float64(n)
		if (r.Check() != nil) != c.flagged || f < c.minWrong || after != 0 || re > c.maxRe || re < wrong {
			t.Errorf("offset %g: R²/s² = %.3g, flagged %v (want %v), float32 %.2f %% off (want ≥ %.1f %%), %d rows ranked again (≤ %d), %d off after",
				c.off, r.MaxSqNorm/r.Spread, r.Check() != nil, c.flagged, 100*f, 100*c.minWrong, re, c.maxRe, after)
		}
	}
}

// classOffsets returns n rows of `classes` classes whose centres have
// coordinates ±500 (random signs) and whose rows deviate from their centre
// by spread·N(0, 1) per coordinate, with their labels.
func classOffsets(rng *rand.Rand, n, d, classes int, spread float64) mat32.Matrix {
	centres := make([]float64, classes*d)
	for i := range centres {
		centres[i] = float64(500 * (1 - 2*rng.Intn(2)))
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := 0; i < n; i++ {
		c := centres[(i%classes)*d : (i%classes+1)*d]
		for t := range c {
			x.Data[i*d+t] = float32(c[t] + spread*rng.NormFloat64())
		}
	}
	return x
}

// TestKMeansFloat32Check: with classes at ±500 and a spread of 1e-3 the
// global test passes (the classes are far apart) but k-means with more
// clusters than classes splits each class by rounding: the training
// objective ends at 0 with most clusters unused, and Float32Check says so.
// With a spread of 50 (offset/spread 10, R²/s² ≈ 10²) the same layout is
// fine; a spread of 1 (R²/s² ≈ 2.5·10⁵ inside a class) is not.
func TestKMeansFloat32Check(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(7))
	x := classOffsets(rng, 800, 32, 10, 1e-3)
	if err := MeasureFloat32(x).Check(); err != nil {
		t.Fatalf("global test: %v", err)
	}
	for _, conv := range []string{"strict", "roth", "pml"} {
		opt, _ := KMeansPreset(conv)
		r, err := KMeans(context.Background(), x, 80, opt)
		if err != nil {
			t.Fatal(err)
		}
		used := map[int32]bool{}
		for _, a := range r.Assign {
			used[a] = true
		}
		err = r.Float32Check()
		if !errors.Is(err, ErrFloat32Range) || r.LowPrecisionRows < 400 {
			t.Errorf("%s: %d low-precision rows, %d of 80 clusters used, final training objective %v: err %v",
				conv, r.LowPrecisionRows, len(used), r.History[len(r.History)-1], err)
		}
		t.Logf("%s: %d low-precision rows, %d of 80 clusters used, final training objective %v", conv, r.LowPrecisionRows, len(used), r.History[len(r.History)-1])
	}
	fine := classOffsets(rng, 800, 32, 10, 50)
	r, err := KMeans(context.Background(), fine, 80, DefaultKMeansOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Float32Check(); err != nil || r.LowPrecisionRows != 0 {
		t.Fatalf("spread 50: %d low-precision rows, %v", r.LowPrecisionRows, err)
	}
	r, err = KMeans(context.Background(), classOffsets(rng, 800, 32, 10, 1), 80, DefaultKMeansOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Float32Check(); err == nil {
		t.Fatalf("spread 1: %d low-precision rows, no error", r.LowPrecisionRows)
	}
}

// TestRecheck64HandCases: centroids 4096 and 4097 in one dimension, where
// float32's ‖x‖² + ‖c‖² − 2⟨x, c⟩ has a spacing of 2 against distance
// differences of 0.5: rows 4096.25, 4096.5 (a tie: the lower index) and
// 4096.75 belong to centroids 0, 0, 1 whatever the float32 kernel or a
// wrong input assignment said; far rows (0 and 10⁴) keep theirs.
func TestRecheck64HandCases(t *testing.T) {
	x := mat32.Matrix{Rows: 5, Cols: 1, Data: []float32{4096.25, 4096.5, 4096.75, 0, 10000}}
	cent := mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{4096, 4097}}
	want := []int32{0, 0, 1, 0, 1}
	a, _, err := NearestCentroids(context.Background(), x, cent, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]int32{a, {1, 1, 0, 0, 1}} {
		got := slices.Clone(in)
		n, err := Recheck64(context.Background(), x, cent, got, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || n != 3 {
			t.Errorf("from %v: %v (%d rows ranked again), want %v (3)", in, got, n, want)
		}
	}
}
