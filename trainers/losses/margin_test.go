package losses

import "math"

func init() {
	addCases("margin", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 15},
			{Config{NumClasses: gradC, Hyper: map[string]float64{"beta": 0.9, "class_beta": 1}}, 0, 16},
		},
		ref: []refCase{
			// β = 1.1: [d_ap − .9]₊ = .1, .1, .5142136, .5142136; [1.3 − d_an]₊ = 0, .7823619, .7823619, 0:
			// 6 non-zero terms.
			{"margin", Config{Hyper: map[string]float64{"beta": 1.1}}, nil,
				(0.2 + 2*(math.Sqrt2-0.9) + 2*(1.3-0.5176380902050415)) / 6},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"class_beta": 1}},
		},
	})
}
