package clustering

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dmlbench/dmlbench/knn"
)

// Spectral is spectral clustering with a k-NN affinity graph (Shi & Malik
// 2000; Ng, Jordan & Weiss 2002; as scikit-learn
// SpectralClustering(affinity="nearest_neighbors"), one of the fixed-K
// methods of seed 001 Tab. 4):
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
// N×N matrix (O(N³)); above, block subspace iteration on (I + M)/2 with
// Rayleigh–Ritz every 5 steps, block size b = K + max(5, K/4), until the
// residuals ‖Sv − θv‖ ≤ 1e-6 (at most 1000 steps): O(steps·(nnz·b + N·b²)).
// Multiple eigenvalues (one 1 per connected component of the graph) are
// handled because the whole block is iterated.
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
	n      int
	rowPtr []int
	col    []int32
	val    []float64
}

// mulBlock computes out = S·v for the n×b row-major block v.
func (m *csr) mulBlock(v, out []float64, b int) {
	clear(out)
	for i := 0; i < m.n; i++ {
		o := out[i*b : (i+1)*b]
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			w := m.val[p]
			src := v[int(m.col[p])*b : int(m.col[p]+1)*b]
			for t, s := range src {
				o[t] += w * s
			}
		}
	}
}

// Cluster implements Clusterer.
func (s *Spectral) Cluster(ctx context.Context, x knn.Matrix) ([]int32, error) {
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
	e := knn.Matrix{Rows: n, Cols: k, Data: emb}
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
func (s *Spectral) affinity(ctx context.Context, x knn.Matrix) (*csr, []float64, error) {
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
	m := &csr{n: n, rowPtr: make([]int, n+1)}
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

// subspaceLeadingEigvecs computes the k leading eigenvectors of the
// symmetric m (spectrum in [−1, 1]) by block subspace iteration on
// S = (I + m)/2 with Rayleigh–Ritz.
func subspaceLeadingEigvecs(ctx context.Context, m *csr, k int, rng *rand.Rand) ([]float64, error) {
	n := m.n
	b := min(n, k+max(5, k/4))
	v := mat.NewDense(n, b, nil)
	for i := 0; i < n; i++ {
		for t := 0; t < b; t++ {
			v.Set(i, t, rng.NormFloat64())
		}
	}
	orthonormalize(v)
	sv := mat.NewDense(n, b, nil)
	apply := func() { // sv = (v + m·v)/2
		m.mulBlock(v.RawMatrix().Data, sv.RawMatrix().Data, b)
		sv.Add(sv, v)
		sv.Scale(0.5, sv)
	}
	const tol = 1e-6
	for it := 1; it <= 1000; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		apply()
		v.Copy(sv)
		orthonormalize(v)
		if it%5 != 0 {
			continue
		}
		// Rayleigh–Ritz: H = Vᵀ S V, V ← V·Y (descending Ritz values).
		apply()
		var h mat.Dense
		h.Mul(v.T(), sv)
		hs := mat.NewSymDense(b, nil)
		for i := 0; i < b; i++ {
			for j := i; j < b; j++ {
				hs.SetSym(i, j, (h.At(i, j)+h.At(j, i))/2)
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(hs, true) {
			return nil, fmt.Errorf("spectral: Rayleigh–Ritz eigen-decomposition did not converge")
		}
		theta := eig.Values(nil)
		var y, yr mat.Dense
		eig.VectorsTo(&y)
		yr.CloneFrom(&y)
		for t := 0; t < b; t++ { // reverse columns → descending
			for i := 0; i < b; i++ {
				yr.Set(i, t, y.At(i, b-1-t))
			}
		}
		var nv, nsv mat.Dense
		nv.Mul(v, &yr)
		nsv.Mul(sv, &yr)
		v.Copy(&nv)
		// Residuals of the k leading Ritz pairs.
		conv := true
		for t := 0; t < k && conv; t++ {
			th := theta[b-1-t]
			var r float64
			for i := 0; i < n; i++ {
				e := nsv.At(i, t) - th*nv.At(i, t)
				r += e * e
			}
			conv = math.Sqrt(r) <= tol
		}
		if conv {
			u := make([]float64, n*k)
			for i := 0; i < n; i++ {
				for t := 0; t < k; t++ {
					u[i*k+t] = v.At(i, t)
				}
			}
			return u, nil
		}
	}
	return nil, fmt.Errorf("spectral: subspace iteration did not converge in 1000 steps (raise SpectralDenseLimit to use the dense solver)")
}

// orthonormalize replaces the columns of v (n×b, n ≥ b) by an orthonormal
// basis of their span: Cholesky QR applied twice (CholQR2: G = VᵀV = RᵀR,
// V ← V·R⁻¹), O(n·b²) with gonum's blocked GEMM, falling back to modified
// Gram–Schmidt with re-orthogonalisation when G is not numerically positive
// definite.
func orthonormalize(v *mat.Dense) {
	for pass := 0; pass < 2; pass++ {
		if !cholQRStep(v) {
			mgs(v)
			return
		}
	}
}

func cholQRStep(v *mat.Dense) bool {
	_, b := v.Dims()
	var g mat.Dense
	g.Mul(v.T(), v)
	gs := mat.NewSymDense(b, nil)
	for i := 0; i < b; i++ {
		for j := i; j < b; j++ {
			gs.SetSym(i, j, (g.At(i, j)+g.At(j, i))/2)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(gs) {
		return false
	}
	if c := ch.Cond(); c > 1e12 || math.IsNaN(c) {
		return false
	}
	var r mat.TriDense
	ch.UTo(&r)
	raw := v.RawMatrix()
	blas64.Trsm(blas.Right, blas.NoTrans, 1, r.RawTriangular(), raw)
	return true
}

// mgs is modified Gram–Schmidt with one re-orthogonalisation pass; columns
// that vanish are replaced by a unit vector orthogonal to the previous ones.
func mgs(v *mat.Dense) {
	n, b := v.Dims()
	col := make([]float64, n)
	for t := 0; t < b; t++ {
		mat.Col(col, t, v)
		for pass := 0; pass < 2; pass++ {
			for s := 0; s < t; s++ {
				var dot float64
				for i := 0; i < n; i++ {
					dot += v.At(i, s) * col[i]
				}
				for i := 0; i < n; i++ {
					col[i] -= dot * v.At(i, s)
				}
			}
		}
		nrm := 0.0
		for _, c := range col {
			nrm += c * c
		}
		nrm = math.Sqrt(nrm)
		if nrm < 1e-300 {
			clear(col)
			col[t%n] = 1
			nrm = 1
		}
		for i := 0; i < n; i++ {
			v.Set(i, t, col[i]/nrm)
		}
	}
}
