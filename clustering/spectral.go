package clustering

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/knn"
)

// Spectral is spectral clustering with a k-NN affinity graph (Shi & Malik
// 2000; Ng, Jordan & Weiss 2002; as scikit-learn
// SpectralClustering(affinity="nearest_neighbors"), one of the fixed-K
// methods of Seidenschwarz et al. 2021 Tab. 4):
//
//  1. A_ij = 1 if j is among the SpectralNeighbors nearest rows of i, the
//     row itself included (sklearn kneighbors_graph(include_self=True));
//     W = (A + Aᵀ)/2, degrees d_i = Σ_j W_ij (≥ 1 thanks to the self loop).
//  2. The K leading eigenvectors U of M = D^{-1/2} W D^{-1/2} (the K
//     smallest of the normalised Laplacian L = I − M).
//  3. Embedding row i = U_i / √d_i (sklearn spectral_embedding's scaling).
//  4. KMeans on the embedding, best objective of 10 seeded restarts
//     (sklearn n_init = 10).
//
// Eigenvectors: for N ≤ SpectralDenseLimit, gonum mat.EigenSym on the dense
// N×N matrix (O(N³)). Above, Chebyshev-filtered subspace iteration (Zhou &
// Saad, "A Chebyshev–Davidson algorithm for large symmetric eigenproblems",
// SIAM J. Matrix Anal. Appl. 29(3), 2007, and Zhou, Saad, Tiago &
// Chelikowsky, J. Comput. Phys. 219, 2006; here mirrored to the top of the
// spectrum) on a block of b = K + max(10, K/4) vectors, from a Gaussian
// block drawn from Params.Seed:
//
//	repeat
//	  Rayleigh–Ritz: H = Vᵀ M V = Y Θ Yᵀ, V ← V·Y (θ_1 ≥ … ≥ θ_b)
//	  stop when ‖M v_t − θ_t v_t‖₂ ≤ 1e-8 for the K leading pairs
//	  V ← p(M)·V, p the scaled degree-d Chebyshev polynomial that damps
//	      [−1, min(θ_b, c*)] and is 1 at θ_1; re-orthonormalise V
//
// M's spectrum lies in [−1, 1] (‖M‖₂ = 1, so the residual bound is also
// relative; each θ_t is within it of an eigenvalue and within its square
// over the gap of λ_t). The filter grows λ > θ_b by T_d(γ(λ)), γ(λ) =
// (2λ − θ_b + 1)/(θ_b + 1), relative to the damped interval, so the t-th
// pair converges as (γ_t + √(γ_t² − 1))^−d per sweep against the gap
// λ_t − λ_{b+1}, where power iteration on (I + M)/2 gains only
// (1 + λ_{b+1})/(1 + λ_t) per product. d ≤ 40 is chosen so that T_d(γ(θ_1)) ≤ 1e10 (the filtered
// block stays well conditioned for Cholesky QR); c* keeps the filter
// damping by ≥ 1e3 when the block lies inside an eigenvalue cluster
// larger than itself (θ_b ≈ θ_1, e.g. more connected components than K).
// Every sweep costs d + 2 sparse block products and one Cholesky QR (two
// when ill-conditioned, Householder QR when that fails) and a Rayleigh–
// Ritz step: O(sweeps·(d·nnz·b + N·b² + b³)); typically 5–8 sweeps of
// degree 16–24 (N = 2 420, K = 121: 0.9 s with ~6 sweeps). The whole block
// is iterated, so multiple eigenvalues (one 1 per connected component)
// are handled; the result is deterministic for a seed whatever Threads.
type Spectral struct{ p Params }

// NewSpectral validates K and SpectralNeighbors.
func NewSpectral(p Params) (*Spectral, error) {
	if p.K <= 0 {
		return nil, fmt.Errorf("%w: spectral needs K > 0, got %d", ErrBadInput, p.K)
	}
	if p.SpectralNeighbors <= 0 {
		return nil, fmt.Errorf("%w: spectral needs SpectralNeighbors > 0, got %d", ErrBadInput, p.SpectralNeighbors)
	}
	return &Spectral{p}, nil
}

// Name implements Clusterer.
func (s *Spectral) Name() string { return "spectral" }

// csr is a symmetric sparse matrix in compressed-row form.
type csr struct {
	n       int
	rowPtr  []int
	col     []int32
	val     []float64
	threads int // for the block products; <= 0 means GOMAXPROCS
}

// Cluster implements Clusterer.
func (s *Spectral) Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error) {
	if err := checkData(x); err != nil {
		return nil, err
	}
	n, k := x.Rows, s.p.K
	if err := checkK("spectral", k, n); err != nil {
		return nil, err
	}
	if k == 1 {
		return make([]int32, n), nil
	}
	m, deg, err := s.affinity(ctx, x)
	if err != nil {
		return nil, err
	}
	var u []float64 // n×k row-major
	if n <= s.p.SpectralDenseLimit {
		u, err = denseLeadingEigvecs(m, k)
	} else {
		u, err = subspaceLeadingEigvecs(ctx, m, k, rand.New(rand.NewSource(s.p.Seed)))
	}
	if err != nil {
		return nil, err
	}
	emb := make([]float32, n*k)
	for i := 0; i < n; i++ {
		sd := math.Sqrt(deg[i])
		for t := 0; t < k; t++ {
			emb[i*k+t] = float32(u[i*k+t] / sd)
		}
	}
	e := mat32.Matrix{Rows: n, Cols: k, Data: emb}
	var best *KMeansResult
	for r := int64(0); r < 10; r++ {
		opt := DefaultKMeansOptions()
		opt.Seed, opt.Threads = s.p.Seed+r, s.p.Threads
		res, err := KMeans(ctx, e, k, opt)
		if err != nil {
			return nil, fmt.Errorf("spectral: k-means on the embedding: %w", err)
		}
		if best == nil || res.Objective < best.Objective {
			best = res
		}
	}
	return relabel(best.Assign), nil
}

// affinity builds M = D^{-1/2} W D^{-1/2} and the degrees of W.
func (s *Spectral) affinity(ctx context.Context, x mat32.Matrix) (*csr, []float64, error) {
	n := x.Rows
	nn := min(s.p.SpectralNeighbors, n)
	searcher := s.p.Searcher
	if searcher == nil {
		searcher = knn.Exact{}
	}
	adj := make([]map[int32]float64, n)
	for i := range adj {
		adj[i] = map[int32]float64{int32(i): 1}
	}
	if nn > 1 {
		nb, err := searcher.Search(ctx, x, x, nn-1, knn.Options{Metric: knn.L2, Exclude: knn.ExcludeSelf, Threads: s.p.Threads})
		if err != nil {
			return nil, nil, fmt.Errorf("spectral: k-NN graph: %w", err)
		}
		for i := 0; i < n; i++ {
			for _, j := range nb.IDsOf(i) {
				if j < 0 || int(j) == i {
					continue
				}
				adj[i][j] += 0.5
				adj[j][int32(i)] += 0.5
			}
		}
	}
	deg := make([]float64, n)
	m := &csr{n: n, rowPtr: make([]int, n+1), threads: s.p.Threads}
	for i, row := range adj {
		cols := make([]int32, 0, len(row))
		for j, w := range row {
			cols = append(cols, j)
			deg[i] += w
		}
		sort.Slice(cols, func(a, b int) bool { return cols[a] < cols[b] })
		for _, j := range cols {
			m.col = append(m.col, j)
			m.val = append(m.val, row[j])
		}
		m.rowPtr[i+1] = len(m.col)
	}
	for i := 0; i < n; i++ {
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			m.val[p] /= math.Sqrt(deg[i] * deg[int(m.col[p])])
		}
	}
	return m, deg, nil
}

// denseLeadingEigvecs returns the k eigenvectors of the largest eigenvalues
// (n×k row-major, descending eigenvalue order).
func denseLeadingEigvecs(m *csr, k int) ([]float64, error) {
	n := m.n
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			if j := int(m.col[p]); j >= i {
				sym.SetSym(i, j, m.val[p])
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, fmt.Errorf("spectral: dense eigen-decomposition did not converge")
	}
	var vec mat.Dense
	eig.VectorsTo(&vec) // columns, ascending eigenvalues
	u := make([]float64, n*k)
	for t := 0; t < k; t++ {
		c := n - 1 - t
		for i := 0; i < n; i++ {
			u[i*k+t] = vec.At(i, c)
		}
	}
	return u, nil
}

// Chebyshev subspace iteration settings.
const (
	// spectralTol bounds ‖m v_t − θ_t v_t‖₂ for the k leading Ritz pairs.
	spectralTol = 1e-8
	// spectralMaxSweeps bounds the filter + Rayleigh–Ritz sweeps.
	spectralMaxSweeps = 300
	// chebMaxDegree, chebMaxGrowth and chebMinGrowth shape the filter (see
	// chebParams): its degree, and the largest and smallest ratio between
	// its value at the top Ritz value and its bound on the damped interval.
	chebMaxDegree = 40
	chebMaxGrowth = 1e10
	chebMinGrowth = 1e3
)

// subspaceLeadingEigvecs computes the k leading eigenvectors of the
// symmetric m, whose spectrum lies in [−1, 1] (n×k row-major, descending
// eigenvalue order), by Chebyshev-filtered subspace iteration (Zhou & Saad
// 2007, mirrored to the top of the spectrum) on a block of
// b = k + max(10, k/4) vectors; see Spectral for the algorithm.
func subspaceLeadingEigvecs(ctx context.Context, m *csr, k int, rng *rand.Rand) ([]float64, error) {
	n := m.n
	b := min(n, k+max(10, k/4))
	v := mat.NewDense(n, b, nil)
	for i := 0; i < n; i++ {
		for t := 0; t < b; t++ {
			v.Set(i, t, rng.NormFloat64())
		}
	}
	orthonormalize(v)
	w := mat.NewDense(n, b, nil)   // m·v
	tmp := mat.NewDense(n, b, nil) // work space
	h := mat.NewDense(b, b, nil)
	hs := mat.NewSymDense(b, nil)
	yr := mat.NewDense(b, b, nil)
	var y mat.Dense
	var eig mat.EigenSym
	theta := make([]float64, b)
	res := make([]float64, k)
	for sweep := 1; sweep <= spectralMaxSweeps; sweep++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Rayleigh–Ritz: H = Vᵀ m V = Y Θ Yᵀ, V ← V·Y, Θ descending.
		m.mulBlock(v.RawMatrix().Data, w.RawMatrix().Data, b)
		h.Mul(v.T(), w)
		for i := 0; i < b; i++ {
			for j := i; j < b; j++ {
				hs.SetSym(i, j, (h.At(i, j)+h.At(j, i))/2)
			}
		}
		if !eig.Factorize(hs, true) {
			return nil, fmt.Errorf("spectral: Rayleigh–Ritz eigen-decomposition did not converge")
		}
		eig.Values(theta)
		slices.Reverse(theta)
		eig.VectorsTo(&y)
		for i := 0; i < b; i++ {
			for t := 0; t < b; t++ {
				yr.Set(i, t, y.At(i, b-1-t))
			}
		}
		tmp.Mul(v, yr)
		v, tmp = tmp, v
		m.mulBlock(v.RawMatrix().Data, w.RawMatrix().Data, b)
		// Residuals ‖m v_t − θ_t v_t‖ of the k leading Ritz pairs.
		clear(res)
		vd, wd := v.RawMatrix().Data, w.RawMatrix().Data
		for i := 0; i < n; i++ {
			vr, wr := vd[i*b:i*b+k], wd[i*b:i*b+k]
			for t := range res {
				e := wr[t] - theta[t]*vr[t]
				res[t] += e * e
			}
		}
		worst := 0.0
		for _, r := range res {
			worst = max(worst, math.Sqrt(r))
		}
		lo, top := -1.0, theta[0]
		cut, deg := chebParams(lo, theta[b-1], top)
		if worst <= spectralTol {
			u := make([]float64, n*k)
			for i := 0; i < n; i++ {
				copy(u[i*k:(i+1)*k], vd[i*b:i*b+k])
			}
			return u, nil
		}
		v, tmp = chebFilter(m, v, w, tmp, deg, lo, cut, top)
		orthonormalize(v)
	}
	return nil, fmt.Errorf("spectral: Chebyshev subspace iteration did not converge in %d sweeps (raise SpectralDenseLimit to use the dense solver)", spectralMaxSweeps)
}

// chebParams picks the filter for the Ritz values θ_b = cut and θ_1 = top
// of a spectrum bounded below by lo. The damped interval is [lo, cut'] with
// cut' = min(cut, c*), c* the cut at which the degree-chebMaxDegree filter
// damps [lo, c*] by chebMinGrowth relative to top: when the block sits
// inside a cluster of eigenvalues larger than itself, θ_b ≈ θ_1 and a
// filter on [lo, θ_b] would damp nothing. The degree is then the largest
// d ≤ chebMaxDegree with T_d(t₀) ≤ chebMaxGrowth, t₀ = (2·top − cut' −
// lo)/(cut' − lo) (at least 2), so the filtered block stays well
// conditioned for Cholesky QR.
func chebParams(lo, cut, top float64) (float64, int) {
	t0 := math.Cosh(math.Acosh(chebMinGrowth) / chebMaxDegree)
	cut = min(cut, (2*top+(t0-1)*lo)/(t0+1))
	t0 = (2*top - cut - lo) / (cut - lo)
	d := int(math.Acosh(chebMaxGrowth) / math.Acosh(t0))
	return cut, max(2, min(chebMaxDegree, d))
}

// chebFilter overwrites the block with p(m)·v, p the degree-d Chebyshev
// polynomial of the damped interval [lo, cut], scaled so that p(top) = 1
// (Zhou & Saad 2007, Algorithm 3.2): with e = (cut − lo)/2, c = (cut + lo)/2,
// t(λ) = (λ − c)/e, t₀ = t(top) and r_1 = 1/t₀, r_{j+1} = 1/(2t₀ − r_j),
// p_0 = 1, p_1 = r_1·t, p_{j+1} = 2r_{j+1}·t·p_j − r_j·r_{j+1}·p_{j−1}.
// w must hold m·v on entry; w and spare are clobbered. It returns the block
// holding the result and a spare block.
func chebFilter(m *csr, v, w, spare *mat.Dense, d int, lo, cut, top float64) (out, free *mat.Dense) {
	_, b := v.Dims()
	e, c := (cut-lo)/2, (cut+lo)/2
	t0 := (top - c) / e
	r := 1 / t0
	// p_1(m)·v = (r/e)·(m v − c v) into spare.
	y0, y1 := v.RawMatrix().Data, spare.RawMatrix().Data
	wd := w.RawMatrix().Data
	for i := range y1 {
		y1[i] = r / e * (wd[i] - c*y0[i])
	}
	for j := 1; j < d; j++ {
		rn := 1 / (2*t0 - r)
		// y0 ← 2·rn/e·(m y1 − c y1) − r·rn·y0.
		m.chebStep(y1, y0, b, 2*rn/e, -2*rn*c/e, -r*rn)
		y0, y1 = y1, y0
		v, spare = spare, v
		r = rn
	}
	return spare, v
}

// mulBlock computes out = m·v for the n×b row-major block v.
func (m *csr) mulBlock(v, out []float64, b int) {
	clear(out)
	m.chebStep(v, out, b, 1, 0, 0)
}

// chebStep computes x ← α·m·y + β·y + γ·x for n×b row-major blocks (x is
// read and written row by row, so it may hold any earlier iterate), with
// rows split among m.threads goroutines for large blocks.
func (m *csr) chebStep(y, x []float64, b int, alpha, beta, gamma float64) {
	rows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cols, vals := m.col[m.rowPtr[i]:m.rowPtr[i+1]], m.val[m.rowPtr[i]:m.rowPtr[i+1]]
			o, yi := x[i*b:(i+1)*b], y[i*b:(i+1)*b]
			t := 0
			// Eight columns at a time in registers: one load per product
			// and no store until the row of m is done.
			for ; t+8 <= b; t += 8 {
				o8, y8 := o[t:t+8:t+8], yi[t:t+8:t+8]
				a0, a1, a2, a3 := gamma*o8[0]+beta*y8[0], gamma*o8[1]+beta*y8[1], gamma*o8[2]+beta*y8[2], gamma*o8[3]+beta*y8[3]
				a4, a5, a6, a7 := gamma*o8[4]+beta*y8[4], gamma*o8[5]+beta*y8[5], gamma*o8[6]+beta*y8[6], gamma*o8[7]+beta*y8[7]
				for q, j := range cols {
					w := alpha * vals[q]
					s := y[int(j)*b+t : int(j)*b+t+8 : int(j)*b+t+8]
					a0 += w * s[0]
					a1 += w * s[1]
					a2 += w * s[2]
					a3 += w * s[3]
					a4 += w * s[4]
					a5 += w * s[5]
					a6 += w * s[6]
					a7 += w * s[7]
				}
				o8[0], o8[1], o8[2], o8[3], o8[4], o8[5], o8[6], o8[7] = a0, a1, a2, a3, a4, a5, a6, a7
			}
			for ; t < b; t++ {
				a := gamma*o[t] + beta*yi[t]
				for q, j := range cols {
					a += alpha * vals[q] * y[int(j)*b+t]
				}
				o[t] = a
			}
		}
	}
	threads := parallel.Threads(m.threads)
	if threads = min(threads, m.n/64); threads <= 1 || len(m.val)*b < 1<<18 {
		rows(0, m.n)
		return
	}
	parallel.For(threads, threads, func(w int) { rows(w*m.n/threads, (w+1)*m.n/threads) })
}

// orthonormalize replaces the columns of v (n×b, n ≥ b) by an orthonormal
// basis of their span: the columns are scaled to unit norm, then Cholesky QR
// is applied (G = VᵀV = RᵀR, V ← V·R⁻¹; O(n·b²) in BLAS-3), twice unless the
// first G had condition ≤ 1e4 (CholQR2), falling back to Householder QR when
// G is not numerically positive definite or too ill-conditioned for CholQR2
// to restore orthogonality.
func orthonormalize(v *mat.Dense) {
	n, b := v.Dims()
	raw := v.RawMatrix()
	nrm := make([]float64, b)
	for i := 0; i < n; i++ {
		for t, x := range raw.Data[i*raw.Stride : i*raw.Stride+b] {
			nrm[t] += x * x
		}
	}
	for t := range nrm {
		if nrm[t] > 0 {
			nrm[t] = 1 / math.Sqrt(nrm[t])
		}
	}
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+b]
		for t := range row {
			row[t] *= nrm[t]
		}
	}
	for pass := 0; pass < 2; pass++ {
		cond, ok := cholQRStep(v)
		if !ok {
			householderQR(v)
			return
		}
		if cond <= 1e4 {
			// CholQR leaves ‖QᵀQ − I‖ ≲ κ(G)·ε: 1e-12, no second pass needed.
			return
		}
	}
}

// cholQRStep is one CholQR pass; it reports the condition estimate of the
// Gram matrix and false, leaving v untouched, when the pass is unsafe.
func cholQRStep(v *mat.Dense) (float64, bool) {
	_, b := v.Dims()
	gs := mat.NewSymDense(b, nil)
	blas64.Syrk(blas.Trans, 1, v.RawMatrix(), 0, gs.RawSymmetric())
	var ch mat.Cholesky
	if !ch.Factorize(gs) {
		return 0, false
	}
	c := ch.Cond()
	if c > 1e12 || math.IsNaN(c) {
		return c, false
	}
	var r mat.TriDense
	ch.UTo(&r)
	blas64.Trsm(blas.Right, blas.NoTrans, 1, r.RawTriangular(), v.RawMatrix())
	return c, true
}

// householderQR replaces v by the Q factor of its Householder QR
// factorisation (orthonormal columns even when v is rank deficient).
func householderQR(v *mat.Dense) {
	_, b := v.Dims()
	a := v.RawMatrix()
	tau := make([]float64, b)
	work := make([]float64, 1)
	lapack64.Geqrf(a, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(a, tau, work, len(work))
	lapack64.Orgqr(a, tau, work, -1)
	if need := int(work[0]); need > len(work) {
		work = make([]float64, need)
	}
	lapack64.Orgqr(a, tau, work, len(work))
}
