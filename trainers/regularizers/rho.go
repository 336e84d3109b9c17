package regularizers

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
)

// DefaultRhoP is the default switch probability p_switch of ρ-regularisation.
// Roth et al. 2020 (supplementary) report per-method values in their
// Tab. 4–6 and show (§B, Fig. 8) that
// R@1 rises with p_switch up to a saturation point and is robust around it,
// and uses p_switch = 0.001 only for its 2-D toy example (§G). 0.2 is the
// default of the authors' reference implementation (rho_distance miner,
// miner_rho_distance_cp); their published R-Margin runs use 0.35–0.4.
const DefaultRhoP = 0.2

// Rho is ρ-regularisation (Roth et al. 2020 main paper §5, supp. §B/§D) as a wrapper
// of any tuple miner. After the inner miner has chosen the tuples 𝒯, each
// tuple (a, p, n) is, with probability p_switch, replaced by the switched
// tuple
//
//	(a, p, n)  →  (a, a, p′),   p′ ~ U{j ≠ a : y_j = y_a}
//
// i.e. the negative is swapped for a positive p′ of the anchor, and the
// positive slot holds the anchor itself (distance 0, no gradient), exactly
// as the authors' reference miner does. Every ranking loss over triplets then
// pushes p′ away from a through its negative term (R-Contrastive: [γ −
// d(a,p′)]₊; R-Triplet: [γ − d(a,p′)]₊; R-Margin: [γ − d(a,p′) + β]₊;
// R-SNR: [γ − d_S(a,p′)]₊), which counteracts the compression of classes
// and lowers the spectral decay ρ(Φ) of the embedding (§5, supp. §D).
//
// The switch is drawn per mined tuple (the reference miner draws it per
// anchor and mines one tuple per anchor, the same thing there); the draws
// come from the rng handed to Mine, after the inner miner's own draws, so a
// seeded run is reproducible. p_switch = 0 leaves the inner miner untouched
// (no extra draws). Install it on a loss with Wrap.
type Rho struct {
	Inner miners.Miner
	P     float64 // p_switch ∈ [0, 1]

	// Mined and Switched count the tuples of the last Mine call (tests and
	// diagnostics).
	Mined, Switched int
}

// NewRho wraps inner with switch probability p.
func NewRho(inner miners.Miner, p float64) (*Rho, error) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return nil, fmt.Errorf("rho-reg: p_switch = %v must lie in [0, 1]", p)
	}
	return &Rho{Inner: inner, P: p}, nil
}

// Wrap installs ρ-regularisation with switch probability p on a tuple loss.
// Losses that do not mine tuples (proxy, classification and similarity
// losses that use the whole batch) cannot take it and get an error.
func Wrap(l losses.Loss, p float64) error {
	mw, ok := l.(losses.MinerWrapper)
	if !ok {
		return fmt.Errorf("rho-reg: loss %s does not mine tuples; ρ-regularisation swaps negatives of mined tuples and applies only to tuple losses (contrastive, triplet, margin, snr, quadruplet)", l.Name())
	}
	if _, err := NewRho(nil, p); err != nil {
		return err
	}
	mw.WrapMiner(func(m miners.Miner) miners.Miner {
		r, _ := NewRho(m, p)
		return r
	})
	return nil
}

// Name implements miners.Miner.
func (r *Rho) Name() string { return fmt.Sprintf("rho(%s, p=%g)", r.Inner.Name(), r.P) }

// SetDim forwards the embedding dimension to the inner miner.
func (r *Rho) SetDim(d int) {
	if s, ok := r.Inner.(miners.DimSetter); ok {
		s.SetDim(d)
	}
}

// SetMargin forwards the loss margin to the inner miner.
func (r *Rho) SetMargin(m float64) {
	if s, ok := r.Inner.(miners.MarginSetter); ok {
		s.SetMargin(m)
	}
}

// Mine implements miners.Miner.
func (r *Rho) Mine(dist []float32, labels []int, rng *rand.Rand) miners.Triplets {
	t := r.Inner.Mine(dist, labels, rng)
	r.Mined, r.Switched = t.Len(), 0
	if r.P <= 0 || rng == nil || t.Len() == 0 {
		return t
	}
	// Copy: the inner miner may hand out slices it keeps.
	out := miners.Triplets{A: append([]int32(nil), t.A...), P: append([]int32(nil), t.P...), N: append([]int32(nil), t.N...)}
	var pos []int32
	for i, a := range out.A {
		if rng.Float64() >= r.P {
			continue
		}
		pos = pos[:0]
		for j, y := range labels {
			if int32(j) != a && y == labels[a] {
				pos = append(pos, int32(j))
			}
		}
		if len(pos) == 0 {
			continue // cannot happen for a valid tuple: p is a positive
		}
		out.P[i], out.N[i] = a, pos[rng.Intn(len(pos))]
		r.Switched++
	}
	return out
}
