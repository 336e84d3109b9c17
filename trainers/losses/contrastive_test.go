package losses

import "math"

func init() {
	addCases("contrastive", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 11},
			{Config{Hyper: map[string]float64{"margin": 1.5, "pos_margin": 0.1}}, 0, 12},
		},
		ref: []refCase{
			// positives: (1 + 1 + √2 + √2)/4; negatives [1 − d_an]₊: (0 + .4823619 + .4823619 + 0)/4.
			{"contrastive", Config{}, nil, (2+2*math.Sqrt2)/4 + 2*(1-0.5176380902050415)/4},
		},
		trainLR: 0.1,
	})
}
