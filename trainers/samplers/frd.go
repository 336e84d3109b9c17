package samplers

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"gonum.org/v1/gonum/mat"
)

func init() {
	Register(Info{Name: "frd", Summary: fmt.Sprintf("Fréchet-distance batch matching: of %d random SPC-%d candidate batches, the one whose "+
		"embedding mean and covariance are closest in Fréchet distance to those of a seeded %d-sample reference of the training set "+
		"(Roth et al. 2020 Tab. 7–9, FRD; embeds the training set every epoch)",
		DefaultCandidates, DefaultSamplesPerClass, DefaultReference), New: func() Sampler { return &FRD{} }})
}

// FRD is Fréchet-distance batch matching (Roth et al. 2020, Tab. 7–9). Once per
// epoch it estimates the mean μ_r and covariance Σ_r (denominator n−1) of
// the embeddings of a seeded reference subsample of Reference training
// samples. For each batch it draws Candidates SPC-K batches and returns the
// one minimising the Fréchet distance of the Gaussians fitted to it,
//
//	FD = ‖μ_r − μ_c‖² + tr Σ_r + tr Σ_c − 2 tr (Σ_r^{1/2} Σ_c Σ_r^{1/2})^{1/2},
//
// the last trace computed as Σ √max(λ, 0) over the eigenvalues λ of the
// symmetric Σ_r^{1/2} Σ_c Σ_r^{1/2} (equal to tr (Σ_r Σ_c)^{1/2}; gonum
// EigenSym, no complex square root needed). Ties go to the first candidate.
type FRD struct {
	store
	K, Candidates, Reference int
}

// Name implements Sampler.
func (*FRD) Name() string { return "frd" }

// Batches implements Sampler.
func (s *FRD) Batches(labels []int32, batchSize, iters int, rng *rand.Rand) ([][]int, error) {
	if err := checkArgs(labels, batchSize, iters); err != nil {
		return nil, err
	}
	if err := s.check("frd", labels); err != nil {
		return nil, err
	}
	ref := subsample(len(labels), orDefault(s.Reference, DefaultReference), rng)
	g, err := newGaussRef(s.emb, ref)
	if err != nil {
		return nil, err
	}
	return matchBatches(labels, batchSize, iters, orDefault(s.K, DefaultSamplesPerClass), orDefault(s.Candidates, DefaultCandidates), rng,
		func(b []int) float64 { return g.frechet(s.emb, b) }), nil
}

// gaussRef is the reference Gaussian of FRD with Σ_r^{1/2} precomputed.
type gaussRef struct {
	mu    []float64
	trCov float64
	sqrt  *mat.SymDense // Σ_r^{1/2}
}

// meanCov returns the mean and covariance (denominator n−1; 0 for n = 1)
// of rows idx.
func meanCov(emb mat32.Matrix, idx []int) ([]float64, *mat.SymDense) {
	D := emb.Cols
	mu := make([]float64, D)
	for _, i := range idx {
		for t, v := range emb.Row(i) {
			mu[t] += float64(v)
		}
	}
	for t := range mu {
		mu[t] /= float64(len(idx))
	}
	x := mat.NewDense(len(idx), D, nil)
	for r, i := range idx {
		for t, v := range emb.Row(i) {
			x.Set(r, t, float64(v)-mu[t])
		}
	}
	cov := mat.NewSymDense(D, nil)
	cov.SymOuterK(1/math.Max(1, float64(len(idx)-1)), x.T())
	return mu, cov
}

func newGaussRef(emb mat32.Matrix, idx []int) (*gaussRef, error) {
	return gaussFrom(meanCov(emb, idx))
}

func gaussFrom(mu []float64, cov *mat.SymDense) (*gaussRef, error) {
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("samplers: frd: eigen-decomposition of the reference covariance failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	D := len(mu)
	// Σ^{1/2} = V diag(√max(λ,0)) Vᵀ = WWᵀ with W = V diag(max(λ,0)^{1/4})
	// (negative λ are rounding noise).
	vs := mat.DenseCopyOf(&vecs)
	for j, l := range vals {
		r := math.Sqrt(math.Sqrt(math.Max(l, 0)))
		for i := 0; i < D; i++ {
			vs.Set(i, j, vs.At(i, j)*r)
		}
	}
	sq := mat.NewSymDense(D, nil)
	sq.SymOuterK(1, vs)
	return &gaussRef{mu: mu, trCov: mat.Trace(cov), sqrt: sq}, nil
}

// frechet is the Fréchet distance between the reference and the Gaussian
// fitted to rows idx.
func (g *gaussRef) frechet(emb mat32.Matrix, idx []int) float64 {
	return g.frechetTo(meanCov(emb, idx))
}

// frechetTo is the Fréchet distance between the reference and N(mu, cov).
func (g *gaussRef) frechetTo(mu []float64, cov *mat.SymDense) float64 {
	var d2 float64
	for t := range mu {
		d := mu[t] - g.mu[t]
		d2 += d * d
	}
	var tmp, m mat.Dense
	tmp.Mul(g.sqrt, cov)
	m.Mul(&tmp, g.sqrt)
	D := len(mu)
	sym := mat.NewSymDense(D, nil)
	for i := 0; i < D; i++ {
		for j := i; j < D; j++ {
			sym.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2) // symmetric up to rounding
		}
	}
	var eig mat.EigenSym
	var trSqrt float64
	if eig.Factorize(sym, false) {
		for _, l := range eig.Values(nil) {
			trSqrt += math.Sqrt(math.Max(l, 0))
		}
	} else {
		return math.Inf(1) // never chosen unless every candidate fails
	}
	return d2 + g.trCov + mat.Trace(cov) - 2*trSqrt
}
