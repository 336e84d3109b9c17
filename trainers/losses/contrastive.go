package losses

import G "gorgonia.org/gorgonia"

// contrastive is the contrastive loss of Hadsell et al. (2006) as in Roth et al. 2020
// §A.1 eq. 1, on the pairs (a,p) and (a,n) of mined triplets 𝒯 (default
// miner: distance-weighted, as Roth et al. use for all ranking losses):
//
//	L = 1/|𝒯| Σ_𝒯 [d(φ_a, φ_p) − γ⁺]₊ + 1/|𝒯| Σ_𝒯 [γ − d(φ_a, φ_n)]₊
//
// with d the Euclidean distance of unit-normalised embeddings, γ = 1 and the
// positive margin γ⁺ = 0 (Roth et al. 2020's reference code; γ⁺ > 0 stops pulling
// positives closer than γ⁺).
type contrastive struct {
	tuples
	margin, posMargin float64
}

func init() {
	Register(Info{
		Name:    "contrastive",
		Summary: "mean [d(a,p) − γ⁺]₊ + mean [γ − d(a,n)]₊ over mined pairs, γ = 1 (Hadsell 2006; Roth et al. 2020 eq. 1)",
		Hyper:   map[string]float64{"margin": 1, "pos_margin": 0},
		Miner:   "distance",
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &contrastive{margin: c.Hyper["margin"], posMargin: c.Hyper["pos_margin"]}
			if err := positive(map[string]float64{"margin": l.margin}); err != nil {
				return nil, err
			}
			var err error
			l.tuples, err = newTuples("contrastive", c, "distance", l.margin)
			l.r.graph = l.graph
			return l, err
		},
	})
}

func (l *contrastive) graph(b *builder) *G.Node {
	t := b.triplets()
	pos := relu(addS(t.dap, -l.posMargin))
	negs := relu(addS(neg(t.dan), l.margin))
	return total(mul(add(pos, negs), t.w))
}

// Forward implements Loss.
func (l *contrastive) Forward(b Batch, grad []float32) (float64, error) { return l.forward(b, grad) }
