package spectra

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ErrBadInput is wrapped by every input-validation error of this package.
var ErrBadInput = errors.New("spectra: bad input")

// gramChunk is the number of rows whose partial Gram matrix one goroutine
// computes; partial sums are added in chunk order, so the result does not
// depend on the number of goroutines.
const gramChunk = 2048

// SingularValues returns the singular values σ_1 ≥ … ≥ σ_r of the uncentred
// N×D matrix x, r = min(N, D) (docs/metrics.md "ρ"; Roth et al. 2020 §5 uses the spectrum
// of the embedded test set Φ_X without centring).
//
// For N ≥ D they are √max(λ_i, 0) for the eigenvalues λ_i of the D×D Gram
// matrix G = XᵀX, accumulated in float64 over fixed 2048-row chunks in
// parallel (gonum Dsyrk), then gonum mat.EigenSym: O(N·D² + D³) time, O(D²)
// extra memory beyond one float64 chunk per goroutine. Because σ_i² is what
// is computed, a singular value is accurate to about √ε·σ_1 ≈ 1.5e-8·σ_1
// in absolute terms; when the smallest value falls below 1e-6·σ_1 the
// spectrum is recomputed by gonum's SVD of the N×D float64 matrix (slower,
// O(N·D²) with a larger constant) whose values below max(N, D)·ε·σ_1 are
// set to 0 (numerical rank). For N < D it is that SVD directly (O(N²·D)).
//
// Errors (wrapping ErrBadInput): empty matrix, data length ≠ N·D, NaN/Inf.
func SingularValues(x mat32.Matrix) ([]float64, error) {
	if err := check(x); err != nil {
		return nil, err
	}
	n, d := x.Rows, x.Cols
	if n < d {
		return svdValues(x)
	}
	g := gram(x)
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(d, g), false) {
		return nil, errors.New("spectra: eigen-decomposition of the Gram matrix did not converge")
	}
	ev := eig.Values(nil)
	s := make([]float64, d)
	for i, v := range ev {
		s[i] = math.Sqrt(math.Max(v, 0))
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	// Squaring loses the small values: below gramResolution·σ_1 their
	// relative error exceeds ~1%, so such (near rank-deficient) spectra are
	// recomputed by SVD, which also reports exact zeros for the null space.
	if s[d-1] < s[0]*gramResolution {
		return svdValues(x)
	}
	return s, nil
}

// gramResolution is the smallest σ_i/σ_1 trusted from the Gram path.
const gramResolution = 1e-6

// svdValues returns the singular values of x by gonum's SVD, descending,
// with values below the numerical-rank tolerance max(N, D)·ε·σ_1 (as numpy's
// matrix_rank) set to exactly 0.
func svdValues(x mat32.Matrix) ([]float64, error) {
	a := mat.NewDense(x.Rows, x.Cols, nil)
	for i := 0; i < x.Rows; i++ {
		for j, v := range x.Row(i) {
			a.Set(i, j, float64(v))
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		return nil, errors.New("spectra: SVD did not converge")
	}
	v := svd.Values(nil) // gonum returns them descending
	tol := float64(max(x.Rows, x.Cols)) * 0x1p-52 * v[0]
	for i := range v {
		if v[i] < tol {
			v[i] = 0
		}
	}
	return v, nil
}

// gram returns the full symmetric D×D matrix XᵀX (row-major, float64).
func gram(x mat32.Matrix) []float64 {
	n, d := x.Rows, x.Cols
	nchunks := (n + gramChunk - 1) / gramChunk
	parts := make([][]float64, nchunks)
	impl := blas64.Implementation()
	_ = parallel.Blocks(context.Background(), 0, nchunks, func() []float64 { return make([]float64, gramChunk*d) },
		func(buf []float64, c int) error {
			r0, r1 := c*gramChunk, min((c+1)*gramChunk, n)
			a := buf[:(r1-r0)*d]
			for i, v := range x.Data[r0*d : r1*d] {
				a[i] = float64(v)
			}
			p := make([]float64, d*d)
			// Upper triangle of Aᵀ·A.
			impl.Dsyrk(blas.Upper, blas.Trans, d, r1-r0, 1, a, d, 0, p, d)
			parts[c] = p
			return nil
		})
	g := parts[0]
	for _, p := range parts[1:] {
		for i, v := range p {
			g[i] += v
		}
	}
	for a := 0; a < d; a++ {
		for b := a + 1; b < d; b++ {
			g[b*d+a] = g[a*d+b]
		}
	}
	return g
}

func check(x mat32.Matrix) error {
	switch {
	case x.Rows <= 0 || x.Cols <= 0:
		return fmt.Errorf("%w: need a non-empty matrix, got %d×%d", ErrBadInput, x.Rows, x.Cols)
	case len(x.Data) != x.Rows*x.Cols:
		return fmt.Errorf("%w: matrix %d×%d has %d values, want %d", ErrBadInput, x.Rows, x.Cols, len(x.Data), x.Rows*x.Cols)
	}
	for i, v := range x.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%w: non-finite value %v at row %d, column %d", ErrBadInput, v, i/x.Cols, i%x.Cols)
		}
	}
	return nil
}

// Rho returns the spectral decay ρ@m of a singular-value spectrum s
// (Roth et al. 2020 main text §5, and docs/metrics.md): s is sorted
// descending, the m−1 largest values are dropped (ρ@1 keeps all), the D'
// kept values are normalised to ŝ_i = s_i / Σ_kept s, and
//
//	ρ@m = KL(U_D' ‖ ŝ) = Σ_i (1/D') · ln((1/D') / ŝ_i),
//
// the divergence of ŝ from the uniform distribution over D' values (natural
// log, as scipy.stats.entropy(uniform, ŝ) in the authors' rho_spectrum.py).
// A flat spectrum gives 0; stronger decay (a more compressed embedding)
// gives larger ρ.
//
// A kept value equal to 0 makes the divergence infinite (ŝ_i = 0 where U
// has mass): Rho then returns +Inf with a nil error and the caller should
// warn (rank-deficient embedding: fewer samples than dimensions, collapsed
// directions, or an all-zero matrix). Errors: m < 1, fewer than m values,
// negative, NaN or infinite values.
func Rho(s []float64, m int) (float64, error) {
	if m < 1 {
		return 0, fmt.Errorf("%w: rho@%d: m must be >= 1", ErrBadInput, m)
	}
	if len(s) < m {
		return 0, fmt.Errorf("%w: rho@%d needs at least %d singular values, got %d", ErrBadInput, m, m, len(s))
	}
	for _, v := range s {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%w: invalid singular value %v", ErrBadInput, v)
		}
	}
	sorted := append([]float64(nil), s...)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	kept := sorted[m-1:]
	var sum float64
	for _, v := range kept {
		sum += v
	}
	if sum == 0 {
		return math.Inf(1), nil
	}
	u := 1 / float64(len(kept))
	var kl float64
	for _, v := range kept {
		if v == 0 {
			return math.Inf(1), nil
		}
		kl += u * math.Log(u*sum/v)
	}
	return kl, nil
}

// PerClass returns the averaged class-conditioned spectrum of Roth et al. 2020
// supp. §E / Fig. 11: for every class c the singular values of the
// (uncentred) submatrix Φ_{y=c} are computed (SingularValues), sorted
// descending, normalised to sum 1, zero-padded to length D, and the
// normalised spectra are averaged over classes with equal weight. Entry i is
// the mean share of the (i+1)-th direction. Classes whose rows are all zero
// (sum 0) cannot be normalised and are skipped; skipped reports how many.
//
// labels[i] is the class of row i (any int32 values). Cost: Σ_c
// O(min(n_c, D)·n_c·D). Errors: length mismatch, invalid matrix, no class
// with a non-zero row.
func PerClass(x mat32.Matrix, labels []int32) (mean []float64, skipped int, err error) {
	if err := check(x); err != nil {
		return nil, 0, err
	}
	if len(labels) != x.Rows {
		return nil, 0, fmt.Errorf("%w: %d labels for %d rows", ErrBadInput, len(labels), x.Rows)
	}
	members := map[int32][]int{}
	var order []int32
	for i, l := range labels {
		if _, ok := members[l]; !ok {
			order = append(order, l)
		}
		members[l] = append(members[l], i)
	}
	sort.Slice(order, func(a, b int) bool { return order[a] < order[b] })
	d := x.Cols
	mean = make([]float64, d)
	used := 0
	for _, l := range order {
		idx := members[l]
		sub := mat32.Matrix{Rows: len(idx), Cols: d, Data: make([]float32, len(idx)*d)}
		for r, i := range idx {
			copy(sub.Data[r*d:(r+1)*d], x.Row(i))
		}
		s, err := SingularValues(sub)
		if err != nil {
			return nil, 0, fmt.Errorf("class %d: %w", l, err)
		}
		var sum float64
		for _, v := range s {
			sum += v
		}
		if sum == 0 {
			skipped++
			continue
		}
		for i, v := range s {
			mean[i] += v / sum
		}
		used++
	}
	if used == 0 {
		return nil, skipped, fmt.Errorf("%w: every class has only zero rows", ErrBadInput)
	}
	for i := range mean {
		mean[i] /= float64(used)
	}
	return mean, skipped, nil
}
