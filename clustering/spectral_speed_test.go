package clustering

import (
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"gonum.org/v1/gonum/mat"
)

// unitClusters returns n unit vectors in d dimensions around `classes`
// random unit centres (Gaussian noise of standard deviation noise per
// coordinate before normalisation), point i in class i % classes.
func unitClusters(seed int64, n, d, classes int, noise float64) (mat32.Matrix, []int) {
	rng := rand.New(rand.NewSource(seed))
	unit := func(v []float64) {
		var s float64
		for _, x := range v {
			s += x * x
		}
		s = 1 / math.Sqrt(s)
		for t := range v {
			v[t] *= s
		}
	}
	centres := make([][]float64, classes)
	for c := range centres {
		centres[c] = make([]float64, d)
		for t := range centres[c] {
			centres[c][t] = rng.NormFloat64()
		}
		unit(centres[c])
	}
	data := make([]float32, n*d)
	lab := make([]int, n)
	p := make([]float64, d)
	for i := 0; i < n; i++ {
		lab[i] = i % classes
		for t := range p {
			p[t] = centres[lab[i]][t] + noise*rng.NormFloat64()
		}
		unit(p)
		for t, x := range p {
			data[i*d+t] = float32(x)
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}, lab
}

// TestSpectralChebyshevEigenvalues checks the k leading eigenvalues of the
// Chebyshev subspace iteration (Rayleigh quotients of the returned vectors)
// against the dense decomposition on 600-point 10-NN graphs: 30 classes that
// are disconnected components (eigenvalue 1 thirty times, more than the
// k = 7 block holds) or connected ones, with k below, at and above the class
// count (the k-th eigenvalue in the bulk for k = 45).
func TestSpectralChebyshevEigenvalues(t *testing.T) {
	for _, noise := range []float64{0.08, 0.16} {
		x, _ := unitClusters(7, 600, 128, 30, noise)
		p := DefaultParams()
		p.K = 30
		s, _ := NewSpectral(p)
		m, _, err := s.affinity(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		n := m.n
		sym := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for q := m.rowPtr[i]; q < m.rowPtr[i+1]; q++ {
				sym.SetSym(i, int(m.col[q]), m.val[q])
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(sym, false) {
			t.Fatal("dense EigenSym failed")
		}
		want := eig.Values(nil)
		sort.Sort(sort.Reverse(sort.Float64Slice(want)))
		v := make([]float64, n)
		mv := make([]float64, n)
		for _, k := range []int{7, 30, 45} {
			u, err := subspaceLeadingEigvecs(ctx, m, k, rand.New(rand.NewSource(3)))
			if err != nil {
				t.Fatalf("noise %v, k=%d: %v", noise, k, err)
			}
			for c := 0; c < k; c++ {
				for i := 0; i < n; i++ {
					v[i] = u[i*k+c]
				}
				m.mulBlock(v, mv, 1)
				var num, den, res float64
				for i := range v {
					num += v[i] * mv[i]
					den += v[i] * v[i]
				}
				got := num / den
				for i := range v {
					e := mv[i] - got*v[i]
					res += e * e
				}
				if math.Abs(den-1) > 1e-10 || math.Sqrt(res) > 2*spectralTol {
					t.Fatalf("noise %v, k=%d, pair %d: ‖v‖² = %v, residual %g", noise, k, c, den, math.Sqrt(res))
				}
				if d := math.Abs(got - want[c]); d > 1e-8 {
					t.Fatalf("noise %v, k=%d, eigenvalue %d: subspace %.12f, dense %.12f (|Δ| = %.2g)", noise, k, c, got, want[c], d)
				}
			}
		}
	}
}

// TestSpectralChebyshevDeterministic: same seed, same labels, whatever the
// thread count.
func TestSpectralChebyshevDeterministic(t *testing.T) {
	x, lab := unitClusters(11, 400, 32, 8, 0.05)
	p := DefaultParams()
	p.K, p.SpectralDenseLimit = 8, 0
	a := mustCluster(t, "spectral", p, x)
	if !samePartition(a, lab) {
		t.Fatalf("well separated clusters not recovered")
	}
	p.Threads = 1
	if b := mustCluster(t, "spectral", p, x); !slices.Equal(a, b) {
		t.Fatalf("labels depend on the thread count")
	}
}

// BenchmarkSpectralChebyshev2400: 2 400 unit vectors in 128-d around 121
// centres, K = 121 (the subspace-iteration path), the size of the embedding
// evaluations that took ~50 s with power iteration on (I + M)/2.
func BenchmarkSpectralChebyshev2400(b *testing.B) {
	x, _ := unitClusters(1, 2400, 128, 121, 0.2)
	p := DefaultParams()
	p.K = 121
	c, err := New("spectral", p)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var labels []int32
	for i := 0; i < b.N; i++ {
		if labels, err = c.Cluster(ctx, x); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(labels) != x.Rows {
		b.Fatalf("%d labels for %d rows", len(labels), x.Rows)
	}
}
