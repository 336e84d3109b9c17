package losses

import "math"

func init() {
	e := math.Exp
	addCases("prototypical", lossCases{
		grad: []gradCase{
			{Config{}, 0, 43},
			{Config{Hyper: map[string]float64{"support": 0.7}}, 0, 44},
		},
		ref: []refCase{
			// Supports {0}, {2}; queries 1 (‖·‖² to μ0, μ1: 1, 2 − √3) and 3 (4, 2).
			{"prototypical", Config{}, nil,
				(math.Log1p(e(math.Sqrt(3)-1)) + math.Log1p(e(-2))) / 2},
		},
		trainLR: 0.01,
		bad: []Config{
			{Hyper: map[string]float64{"support": 1}},
		},
	})
}
