package losses

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// multiSimilarity is the Multi-Similarity loss of Wang et al. (2019), Roth et al. 2020
// §A.1 eqs. 11–12, with its own pair mining. With S_ij = φ_iᵀφ_j the cosine
// similarity of unit-normalised embeddings, anchor i keeps
//
//	positives j ∈ 𝒫_i with S_ij − ε < max_{k∈𝒩_i} S_ik,
//	negatives k ∈ 𝒩_i with S_ik + ε > min_{j∈𝒫_i} S_ij        (eq. 11)
//
// (mined in Go on the float values), and
//
//	L = 1/|A| Σ_{i∈A} [ 1/α · log(1 + Σ_{j∈𝒫̃_i} e^{−α(S_ij − λ)})
//	                   + 1/β · log(1 + Σ_{k∈𝒩̃_i} e^{β(S_ik − λ)}) ]   (eq. 12)
//
// over the anchors A with at least one kept positive and negative (Roth et
// al.'s reference code; eq. 12 prints 1/b). The hyper-parameters are α
// (alpha), β (beta), λ (lambda) and ε (epsilon).
type multiSimilarity struct {
	base
	alpha, beta, lambda, eps float64

	// buffers reused by Forward: unit rows, S, masks, G + Gᵀ, ∂L/∂φ
	u, S, P, N, w, H, dU []float64
}

func init() {
	Register(Info{
		Name:    "multisimilarity",
		Summary: "1/α log(1+Σ_P e^{−α(S−λ)}) + 1/β log(1+Σ_N e^{β(S−λ)}) on ε-mined pairs, α={{alpha}} β={{beta}} λ={{lambda}} ε={{epsilon}} (Wang 2019; Roth et al. 2020 eqs. 11–12)",
		Hyper:   map[string]float64{"alpha": 2, "beta": 40, "lambda": 0.5, "epsilon": 0.1},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &multiSimilarity{base: base{name: "multisimilarity"}, alpha: c.hyperParam("alpha"),
				beta: c.hyperParam("beta"), lambda: c.hyperParam("lambda"), eps: c.hyperParam("epsilon")}
			if err := positive(map[string]float64{"alpha": l.alpha, "beta": l.beta}); err != nil {
				return nil, err
			}
			return l, noMiner(l.name, c)
		},
	})
}

// Forward implements Loss. L and dL/dE are computed in float64 without a
// graph: with w_i = 1/|A| for the anchors kept and
//
//	p_ij = e^{x_ij} / (1 + Σ_{j'∈𝒫̃_i} e^{x_ij'}),  x_ij = −α(S_ij − λ),  j ∈ 𝒫̃_i,
//	q_ik = e^{x_ik} / (1 + Σ_{k'∈𝒩̃_i} e^{x_ik'}),  x_ik =  β(S_ik − λ),  k ∈ 𝒩̃_i,
//
// ∂L/∂S_ij = −w_i·p_ij and ∂L/∂S_ik = w_i·q_ik; with G = ∂L/∂S, ∂L/∂φ =
// (G + Gᵀ)φ, and through φ_i = e_i/r_i, r_i = √(‖e_i‖² + ε),
// ∂L/∂e_i = (∂L/∂φ_i − φ_i(φ_iᵀ∂L/∂φ_i))/r_i. The sums are shifted by
// max(0, max x) so that e^x cannot overflow.
func (l *multiSimilarity) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	B, D := bt.B, bt.D
	l.u = unitRowsTo(grow(l.u, B*D), bt.Emb, B, D)
	l.S = gramTo(grow(l.S, B*B), l.u, B, l.u, B, D)
	u, S := l.u, l.S
	P, N, w, anchors := l.mine(S, bt.Labels)
	if anchors == 0 {
		clear(grad)
		return 0, nil
	}
	l.H = grow(l.H, B*B)
	H := l.H // G + Gᵀ
	clear(H)
	x := make([]float64, 0, B)
	var loss float64
	for i := 0; i < B; i++ {
		if w[i] == 0 {
			continue
		}
		wi := 1 / float64(anchors)
		terms := [2]struct {
			mask      []float64
			scale, in float64 // x = scale·(S − λ); the term is in·lse
		}{{P, -l.alpha, 1 / l.alpha}, {N, l.beta, 1 / l.beta}}
		for _, t := range terms {
			x = x[:0]
			for j := 0; j < B; j++ {
				if t.mask[i*B+j] != 0 {
					x = append(x, t.scale*(S[i*B+j]-l.lambda))
				}
			}
			loss += wi * t.in * lse1(x)
			// ∂(in·lse)/∂S_ij = in·scale·softmax_j = ±softmax_j (in·scale = ±1)
			sign := t.in * t.scale * wi
			k := 0
			for j := 0; j < B; j++ {
				if t.mask[i*B+j] != 0 {
					g := sign * x[k]
					H[i*B+j] += g
					H[j*B+i] += g
					k++
				}
			}
		}
	}
	l.dU = grow(l.dU, B*D)
	dU := l.dU
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: B, Cols: B, Stride: B, Data: H},
		blas64.General{Rows: B, Cols: D, Stride: D, Data: u},
		0, blas64.General{Rows: B, Cols: D, Stride: D, Data: dU})
	unitRowsBack(grad, bt.Emb, u, dU, B, D)
	return loss, nil
}

// mine returns the kept positive and negative pairs (eq. 11) as B×B 0/1
// masks, the anchor weights w (1 for an anchor with both, else 0) and the
// number of anchors kept; the slices are l's buffers.
func (l *multiSimilarity) mine(S []float64, y []int) (P, N, w []float64, anchors int) {
	B := len(y)
	l.P, l.N, l.w = grow(l.P, B*B), grow(l.N, B*B), grow(l.w, B)
	P, N, w = l.P, l.N, l.w
	clear(P)
	clear(N)
	clear(w)
	for i := 0; i < B; i++ {
		minPos, maxNeg, hasP, hasN := 0.0, 0.0, false, false
		for j := 0; j < B; j++ {
			s := S[i*B+j]
			switch {
			case j == i:
			case y[j] == y[i]:
				minPos, hasP = cond(hasP, min(minPos, s), s), true
			default:
				maxNeg, hasN = cond(hasN, max(maxNeg, s), s), true
			}
		}
		keptP, keptN := 0, 0
		for j := 0; hasP && hasN && j < B; j++ {
			s := S[i*B+j]
			if j != i && y[j] == y[i] && s-l.eps < maxNeg {
				P[i*B+j], keptP = 1, keptP+1
			}
			if y[j] != y[i] && s+l.eps > minPos {
				N[i*B+j], keptN = 1, keptN+1
			}
		}
		if keptP > 0 && keptN > 0 {
			w[i], anchors = 1, anchors+1
		}
	}
	return P, N, w, anchors
}

// lse1 returns log(1 + Σ_j e^{x_j}) and overwrites x with the softmax
// e^{x_j}/(1 + Σ e^x), both computed after subtracting m = max(0, max x).
func lse1(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, v)
	}
	s := math.Exp(-m)
	for j, v := range x {
		x[j] = math.Exp(v - m)
		s += x[j]
	}
	for j := range x {
		x[j] /= s
	}
	return math.Log(s) + m
}

// cond returns a if c, else b.
func cond(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}
