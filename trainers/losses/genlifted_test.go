package losses

import "math"

func init() {
	e := math.Exp
	sq2 := math.Sqrt2
	addCases("genlifted", lossCases{
		grad: []gradCase{
			{Config{}, 0, 29},
			{Config{Hyper: map[string]float64{"margin": 2.5, "nu": 0.2}}, 0, 30},
		},
		ref: []refCase{
			// Per anchor: d(a,p) + log Σ_n e^{1 − d(a,n)}; mean + ν/b Σ‖φ‖² = 0.005.
			{"genlifted", Config{}, nil,
				(1+math.Log(e(1-sq2)+e(-1))+1+math.Log(e(1-d12)+e(1-math.Sqrt(3)))+
					sq2+math.Log(e(1-sq2)+e(1-d12))+sq2+math.Log(e(-1)+e(1-math.Sqrt(3))))/4 + 0.005},
		},
		trainLR: 0.01,
		bad: []Config{
			{Hyper: map[string]float64{"nu": -1}},
			{Hyper: map[string]float64{"margin": math.NaN()}},
		},
	})
}
