package regularizers

import (
	"fmt"
	"math"
	"math/rand"
)

// DefaultMixupAlpha is the mixup α of Roth et al. 2020 §H (λ ~ Beta(2, 2)).
const DefaultMixupAlpha = 2

// Mixup is manifold mixup (Verma et al. 2018) for ranking losses, Roth et al. 2020
// §H eq. 31, applied to the embeddings. One λ ~ Beta(α, α) and one random
// permutation π of the batch are drawn per step, and the loss is scored on
// the mixed embeddings
//
//	φ^λ_i = λ·φ_i + (1 − λ)·φ_π(i)
//
// twice, once with each entry of the mixed label (y_i, y_π(i)), weighted by
// its interpolation value (eq. 31):
//
//	L = λ · loss(Φ^λ, y) + (1 − λ) · loss(Φ^λ, y∘π)
//
// so the triplets 𝒯¹ are mined with the first label entry and 𝒯² with the
// second (when i and π(i) share a class both entries coincide, the "one
// entry" case of §H). The mixed rows are not re-normalised here; the
// sphere losses normalise their input themselves. Roth et al. 2020 report that
// mixup compresses the representation and lowers DML generalisation (§H,
// Fig. 13); it is offered to reproduce that finding.
//
// Jacobian: Φ^λ = λΦ + (1−λ)PΦ with P the permutation matrix of π, so
//
//	dL/dφ_j = λ·G_j + (1 − λ)·G_{π⁻¹(j)},   G = dL/dΦ^λ (both views summed).
type Mixup struct {
	Alpha float64

	lambda float64
	perm   []int
	B, D   int
	emb    []float32
	y1, y2 []int
}

// NewMixup returns the mixup augmenter with Beta(α, α) interpolation.
func NewMixup(alpha float64) (*Mixup, error) {
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("mixup: α = %v must be positive", alpha)
	}
	return &Mixup{Alpha: alpha}, nil
}

// Name implements Augmenter.
func (m *Mixup) Name() string { return fmt.Sprintf("mixup(α=%g)", m.Alpha) }

// Augment implements Augmenter.
func (m *Mixup) Augment(emb []float32, labels []int, B, D int, rng *rand.Rand) ([]View, error) {
	if len(emb) != B*D || len(labels) != B || B < 2 {
		return nil, fmt.Errorf("batch of %d values and %d labels is not B×D = %d×%d", len(emb), len(labels), B, D)
	}
	m.lambda = betaSample(rng, m.Alpha, m.Alpha)
	m.perm = rng.Perm(B)
	m.B, m.D = B, D
	m.y1 = append([]int(nil), labels...)
	m.y2 = make([]int, B)
	for i, j := range m.perm {
		m.y2[i] = labels[j]
	}
	return m.apply(emb), nil
}

// apply computes the two views of emb for the drawn λ and π (deterministic
// in emb: gradient checks replay it with the draws fixed).
func (m *Mixup) apply(emb []float32) []View {
	B, D := m.B, m.D
	m.emb = make([]float32, B*D)
	l := float32(m.lambda)
	for i, j := range m.perm {
		for k := 0; k < D; k++ {
			m.emb[i*D+k] = l*emb[i*D+k] + (1-l)*emb[j*D+k]
		}
	}
	return []View{
		{Emb: m.emb, Labels: m.y1, B: B, Weight: m.lambda},
		{Emb: m.emb, Labels: m.y2, B: B, Weight: 1 - m.lambda},
	}
}

// Backward implements Augmenter.
func (m *Mixup) Backward(viewGrads [][]float32, grad []float32) {
	D := m.D
	l := float32(m.lambda)
	for _, g := range viewGrads {
		for i, j := range m.perm {
			for k := 0; k < D; k++ {
				grad[i*D+k] += l * g[i*D+k]
				grad[j*D+k] += (1 - l) * g[i*D+k]
			}
		}
	}
}

// betaSample draws Beta(a, b) as X/(X+Y), X ~ Γ(a), Y ~ Γ(b).
func betaSample(rng *rand.Rand, a, b float64) float64 {
	x, y := gammaSample(rng, a), gammaSample(rng, b)
	return x / (x + y)
}

// gammaSample draws Γ(a, 1) by Marsaglia & Tsang (2000); a < 1 is boosted
// as Γ(a+1)·U^{1/a}.
func gammaSample(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaSample(rng, a+1) * math.Pow(rng.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
