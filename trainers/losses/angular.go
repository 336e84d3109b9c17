package losses

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// angular is the angular loss of Wang et al. (2017) on top of N-pair, seed
// 000 §A.1 eq. 5. Every anchor a with a positive in the batch gets one
// positive p drawn uniformly (Batch.Rng) and all its negatives 𝒩_a, as in
// N-pair (eq. 4), and
//
//	L = L_npair(φ*) + λ/|A| Σ_{a∈A} log(1 + Σ_{n∈𝒩_a} exp(f_{a,p,n}))
//	f_{a,p,n} = 4 tan²α (φ_a + φ_p)ᵀφ_n − 2(1 + tan²α) φ_aᵀφ_p
//
// with L_npair on the raw embeddings φ* (ν = 0.005 regulariser included) and
// the angular term on unit embeddings φ (Roth et al.'s reference code; Fehérvári et al. 2019
// eq. 5 gives the same f). Eq. 5 as printed puts −2(1+tan²α)φ_aᵀφ_n outside
// the log; f above is Wang et al.'s. α = π/4 (tan²α = 1), λ = 2. The model
// must not normalise.
type angular struct {
	base
	tan2, lambda, nu float64
}

func init() {
	Register(Info{
		Name:    "angular",
		Summary: "N-pair(φ*) + λ·mean log(1 + Σ_n e^{4tan²α(φ_a+φ_p)ᵀφ_n − 2(1+tan²α)φ_aᵀφ_p}) on unit φ, α = π/4, λ = 2, ν = 0.005 (Wang 2017; Roth et al. 2020 eq. 5)",
		Hyper:   map[string]float64{"alpha": math.Pi / 4, "lambda": 2, "nu": 0.005},
		New: func(c Config) (Loss, error) {
			alpha := c.Hyper["alpha"]
			l := &angular{base: base{name: "angular"}, lambda: c.Hyper["lambda"], nu: c.Hyper["nu"]}
			if !(alpha > 0 && alpha < math.Pi/2) {
				return nil, fmt.Errorf("hyper-parameter alpha must be in (0, π/2) radians, got %v", alpha)
			}
			if err := checkFinite(map[string]float64{"lambda": l.lambda, "nu": l.nu}); err != nil {
				return nil, err
			}
			if l.lambda < 0 || l.nu < 0 {
				return nil, fmt.Errorf("hyper-parameters lambda and nu must be ≥ 0, got %v, %v", l.lambda, l.nu)
			}
			l.tan2 = math.Tan(alpha) * math.Tan(alpha)
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *angular) graph(b *builder) *G.Node {
	P1, N, w := b.input("p1", b.B, b.B), b.input("neg", b.B, b.B), b.input("w", b.B)
	// N-pair on raw embeddings: log(1 + Σ_n e^{aᵀn − aᵀp}).
	S := matmulT(b.E, b.E)
	npair := total(mul(b.lse(colSub(S, pick(S, P1)), N, true), w))
	reg := mulS(total(sq(b.E)), l.nu/float64(b.B))
	// Angular term on unit embeddings; Up holds each anchor's positive.
	u := b.unitE()
	Up := must(G.Mul(P1, u))
	f := colSub(mulS(matmulT(add(u, Up), u), 4*l.tan2), mulS(rowSum(mul(u, Up)), 2*(1+l.tan2)))
	ang := total(mul(b.lse(f, N, true), w))
	return add(add(npair, reg), mulS(ang, l.lambda))
}

// Forward implements Loss.
func (l *angular) Forward(bt Batch, grad []float32) (float64, error) { return l.nPairForward(bt, grad) }
