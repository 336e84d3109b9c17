package losses

import (
	G "gorgonia.org/gorgonia"
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
// over the anchors A with at least one kept positive and negative (Roth
// et al.'s reference code; eq. 12 prints 1/b). α = 2, β = 40, λ = 0.5, ε = 0.1.
type multiSimilarity struct {
	base
	alpha, beta, lambda, eps float64
}

func init() {
	Register(Info{
		Name:    "multisimilarity",
		Summary: "1/α log(1+Σ_P e^{−α(S−λ)}) + 1/β log(1+Σ_N e^{β(S−λ)}) on ε-mined pairs, α=2 β=40 λ=0.5 ε=0.1 (Wang 2019; Roth et al. 2020 eqs. 11–12)",
		Hyper:   map[string]float64{"alpha": 2, "beta": 40, "lambda": 0.5, "epsilon": 0.1},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &multiSimilarity{base: base{name: "multisimilarity"}, alpha: c.Hyper["alpha"],
				beta: c.Hyper["beta"], lambda: c.Hyper["lambda"], eps: c.Hyper["epsilon"]}
			if err := positive(map[string]float64{"alpha": l.alpha, "beta": l.beta}); err != nil {
				return nil, err
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *multiSimilarity) graph(b *builder) *G.Node {
	u := b.unitE()
	S := addS(matmulT(u, u), -l.lambda)
	pos := mulS(b.lse(mulS(S, -l.alpha), b.input("pos", b.B, b.B), true), 1/l.alpha)
	negs := mulS(b.lse(mulS(S, l.beta), b.input("neg", b.B, b.B), true), 1/l.beta)
	return total(mul(add(pos, negs), b.input("w", b.B)))
}

// Forward implements Loss.
func (l *multiSimilarity) Forward(bt Batch, grad []float32) (float64, error) {
	n, S, err := l.unitGramNet(bt, grad)
	if err != nil {
		return 0, err
	}
	B, y := bt.B, bt.Labels
	P, N, w := n.in("pos"), n.in("neg"), n.in("w")
	clear(P)
	clear(N)
	anchors := 0
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
		w[i] = 0
		if keptP > 0 && keptN > 0 {
			w[i], anchors = 1, anchors+1
		}
	}
	return l.r.runAnchorMean(n, bt, grad, w, anchors)
}

// cond returns a if c, else b.
func cond(c bool, a, b float64) float64 {
	if c {
		return a
	}
	return b
}
