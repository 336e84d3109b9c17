package losses

import "math"

func init() {
	sq2 := math.Sqrt2
	addCases("rankedlist", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 45},
			{Config{Hyper: map[string]float64{"alpha": 1.6, "margin": 0.2, "temperature": 3, "lambda": 0.5}}, 0, 46},
		},
		ref: []refCase{
			// α = 1.2, m = 0.4: 𝒫* = {d > 0.8}: (0,1), (2,3); 𝒩* = {d < 1.2}: (1,2) only.
			// L_P: 0.2, 0.2, √2 − 0.8, √2 − 0.8; L_N: 0, 1.2 − d12, 1.2 − d12, 0 (one negative: weight 1).
			{"rankedlist", Config{}, nil,
				(0.4 + 2*(1.2-d12) + 2*(sq2-0.8)) / 4},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"margin": 2}},
		},
	})
}
