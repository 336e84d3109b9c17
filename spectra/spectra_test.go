package spectra

import (
	"errors"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"gonum.org/v1/gonum/mat"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func TestSingularValuesDiagonal(t *testing.T) {
	// 5×3 with diag(3, −7, 0.5) on top and zero rows below: σ = 7, 3, 0.5.
	x := mat32.Matrix{Rows: 5, Cols: 3, Data: make([]float32, 15)}
	x.Data[0], x.Data[4], x.Data[8] = 3, -7, 0.5
	s, err := SingularValues(x)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{7, 3, 0.5}
	for i := range want {
		if !near(s[i], want[i], 1e-12) {
			t.Fatalf("σ = %v, want %v", s, want)
		}
	}
	// Wide (N < D) path: the transpose has the same values.
	xt := mat32.Matrix{Rows: 3, Cols: 5, Data: make([]float32, 15)}
	xt.Data[0], xt.Data[6], xt.Data[12] = 3, -7, 0.5
	s, err = SingularValues(xt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 3 {
		t.Fatalf("wide matrix: %d values", len(s))
	}
	for i := range want {
		if !near(s[i], want[i], 1e-12) {
			t.Fatalf("wide σ = %v, want %v", s, want)
		}
	}
}

func TestSingularValuesRankDeficient(t *testing.T) {
	// Rank 1: every row is a multiple of (1, 2, 2): σ_1 = ‖a‖·‖(1,2,2)‖ = 3‖a‖,
	// the rest exactly 0 (SVD fallback + numerical rank).
	a := []float32{1, -2, 3, 0.5}
	x := mat32.Matrix{Rows: 4, Cols: 3}
	for _, v := range a {
		x.Data = append(x.Data, v, 2*v, 2*v)
	}
	s, err := SingularValues(x)
	if err != nil {
		t.Fatal(err)
	}
	na := math.Sqrt(1 + 4 + 9 + 0.25)
	if !near(s[0], na*3, 1e-12) || s[1] != 0 || s[2] != 0 {
		t.Fatalf("σ = %v, want [%v 0 0]", s, na*3)
	}
	if r, err := Rho(s, 1); err != nil || !math.IsInf(r, 1) {
		t.Fatalf("rank-deficient rho = %v, %v; want +Inf", r, err)
	}
	// An all-zero matrix has all-zero values, and ρ = +Inf.
	z := mat32.Matrix{Rows: 4, Cols: 2, Data: make([]float32, 8)}
	s, err = SingularValues(z)
	if err != nil || s[0] != 0 || s[1] != 0 {
		t.Fatalf("zero matrix: %v %v", s, err)
	}
	if r, err := Rho(s, 1); err != nil || !math.IsInf(r, 1) {
		t.Fatalf("rho of zero spectrum = %v, %v", r, err)
	}
}

func TestGramMatchesSVD(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, sh := range [][2]int{{10, 10}, {300, 17}, {5000, 64}} {
		n, d := sh[0], sh[1]
		x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
		for i := range x.Data {
			// Uncentred, anisotropic columns.
			x.Data[i] = (float32(rng.NormFloat64()) + 0.3) * float32(1+i%d)
		}
		got, err := SingularValues(x)
		if err != nil {
			t.Fatal(err)
		}
		// Independent reference: gonum SVD on a Dense.
		var svd mat.SVD
		dense := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				dense.Set(i, j, float64(x.Data[i*d+j]))
			}
		}
		if !svd.Factorize(dense, mat.SVDNone) {
			t.Fatal("reference SVD failed")
		}
		ref := svd.Values(nil)
		for i := range ref {
			if !near(got[i], ref[i], 1e-9) {
				t.Fatalf("%d×%d σ_%d: gram %v, svd %v", n, d, i, got[i], ref[i])
			}
		}
		if !sort.IsSorted(sort.Reverse(sort.Float64Slice(got))) {
			t.Fatal("not descending")
		}
	}
}

func TestRhoReferenceValues(t *testing.T) {
	// Uniform spectrum: ρ = 0.
	if r, err := Rho([]float64{2, 2, 2, 2}, 1); err != nil || math.Abs(r) > 1e-15 {
		t.Fatalf("uniform: %v %v", r, err)
	}
	// s = (3, 1): ŝ = (3/4, 1/4), ρ = ½ln((1/2)/(3/4)) + ½ln((1/2)/(1/4))
	//   = ½ ln(2/3) + ½ ln 2 = ½ ln(4/3) = 0.1438410362258904...
	want := 0.5 * math.Log(4.0/3)
	if r, err := Rho([]float64{1, 3}, 1); err != nil || !near(r, want, 1e-15) {
		t.Fatalf("(3,1): got %v want %v (%v)", r, want, err)
	}
	if math.Abs(want-0.14384103622589045) > 1e-15 {
		t.Fatalf("hand value %v", want)
	}
	// s = (4, 2, 1, 1) with m = 2: drop 4, keep (2,1,1): ŝ = (1/2,1/4,1/4),
	// ρ = ⅓[ln(2/3) + 2 ln(4/3)] = ⅓ ln(32/27).
	want = math.Log(32.0/27) / 3
	if r, err := Rho([]float64{4, 2, 1, 1}, 2); err != nil || !near(r, want, 1e-15) {
		t.Fatalf("rho@2: got %v want %v", r, want)
	}
	// ρ@2 of (5, 1, 1) keeps a flat (1, 1): 0.
	if r, err := Rho([]float64{5, 1, 1}, 2); err != nil || math.Abs(r) > 1e-15 {
		t.Fatalf("rho@2 flat: %v %v", r, err)
	}
	// m = len(s): a single kept value, ρ = 0.
	if r, err := Rho([]float64{4, 2}, 2); err != nil || r != 0 {
		t.Fatalf("single value: %v %v", r, err)
	}
	// A zero singular value: +Inf.
	if r, err := Rho([]float64{1, 0}, 1); err != nil || !math.IsInf(r, 1) {
		t.Fatalf("zero value: %v %v", r, err)
	}
	// Scale invariance.
	a, _ := Rho([]float64{5, 3, 1}, 1)
	b, _ := Rho([]float64{50, 30, 10}, 1)
	if !near(a, b, 1e-14) {
		t.Fatalf("scale: %v vs %v", a, b)
	}
	for _, bad := range []struct {
		s []float64
		m int
	}{{[]float64{1}, 0}, {[]float64{1}, 2}, {[]float64{1, -1}, 1}, {[]float64{math.NaN()}, 1}, {nil, 1}} {
		if _, err := Rho(bad.s, bad.m); !errors.Is(err, ErrBadInput) {
			t.Errorf("Rho(%v, %d): want ErrBadInput, got %v", bad.s, bad.m, err)
		}
	}
}

func TestPerClass(t *testing.T) {
	// Class 0: rows (3,0),(0,1) → σ = (3, 1) → ŝ = (.75, .25).
	// Class 5: rows (2,2),(1,1) → rank 1 → ŝ = (1, 0).
	// Class 9: all zero → skipped.
	x := mat32.Matrix{Rows: 5, Cols: 2, Data: []float32{3, 0, 2, 2, 0, 1, 1, 1, 0, 0}}
	labels := []int32{0, 5, 0, 5, 9}
	mean, skipped, err := PerClass(x, labels)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 1 || !near(mean[0], (0.75+1)/2, 1e-12) || !near(mean[1], 0.25/2, 1e-12) {
		t.Fatalf("mean %v skipped %d", mean, skipped)
	}
	// Singleton class in 3-D: (1, 0, 0) padded with zeros.
	mean, _, err = PerClass(mat32.Matrix{Rows: 1, Cols: 3, Data: []float32{0, -4, 0}}, []int32{2})
	if err != nil || mean[0] != 1 || mean[1] != 0 || mean[2] != 0 {
		t.Fatalf("singleton: %v %v", mean, err)
	}
	if _, _, err := PerClass(x, labels[:4]); !errors.Is(err, ErrBadInput) {
		t.Fatal("label mismatch accepted")
	}
	if _, _, err := PerClass(mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{0, 0}}, []int32{1}); !errors.Is(err, ErrBadInput) {
		t.Fatal("all-zero classes accepted")
	}
}

func TestSingularValuesErrors(t *testing.T) {
	for _, x := range []mat32.Matrix{
		{}, {Rows: 2, Cols: 2, Data: []float32{1, 2, 3}},
		{Rows: 1, Cols: 2, Data: []float32{1, float32(math.Inf(1))}},
	} {
		if _, err := SingularValues(x); !errors.Is(err, ErrBadInput) {
			t.Errorf("%v: want ErrBadInput, got %v", x, err)
		}
	}
}

// BenchmarkSingularValuesSOP: Stanford Online Products test-set shape.
func BenchmarkSingularValuesSOP(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	n, d := 60502, 128
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := SingularValues(x); err != nil {
			b.Fatal(err)
		}
	}
}
