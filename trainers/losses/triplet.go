package losses

import G "gorgonia.org/gorgonia"

// triplet is the triplet loss (Hu et al. 2014; Schroff et al. 2015), Roth et al. 2020
// §A.1 eq. 2, over mined triplets 𝒯 (any miner; default distance-weighted,
// Roth et al.'s strongest variant):
//
//	L = 1/|𝒯| Σ_{(a,p,n)∈𝒯} [d(φ_a, φ_p) − d(φ_a, φ_n) + γ]₊,  γ = 0.2,
//
// d the Euclidean distance of unit-normalised embeddings. With avg_nonzero = 1
// the sum is divided by the number of non-zero terms instead of |𝒯| (the
// reducer of pytorch-metric-learning).
type triplet struct {
	tuples
	margin  float64
	nonzero bool
}

func init() {
	Register(Info{
		Name:    "triplet",
		Summary: "mean [d(a,p) − d(a,n) + γ]₊ over mined triplets, γ = 0.2 (Roth et al. 2020 eq. 2)",
		Hyper:   map[string]float64{"margin": 0.2, "avg_nonzero": 0},
		Miner:   "distance",
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &triplet{margin: c.Hyper["margin"]}
			if err := positive(map[string]float64{"margin": l.margin}); err != nil {
				return nil, err
			}
			var err error
			if l.nonzero, err = hyperFlag(c, "avg_nonzero"); err != nil {
				return nil, err
			}
			l.tuples, err = newTuples("triplet", c, "distance", l.margin)
			l.r.graph = l.graph
			return l, err
		},
	})
}

func (l *triplet) graph(b *builder) *G.Node {
	t := b.triplets()
	terms := relu(addS(sub(t.dap, t.dan), l.margin))
	if l.nonzero {
		terms = mul(terms, t.valid)
		b.meanNonZero(terms)
		return total(terms)
	}
	return total(mul(terms, t.w))
}

// Forward implements Loss.
func (l *triplet) Forward(b Batch, grad []float32) (float64, error) { return l.forward(b, grad) }
