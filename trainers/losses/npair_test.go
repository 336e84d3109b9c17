package losses

import "math"

func init() {
	addCases("npair", lossCases{
		grad: []gradCase{
			{Config{}, 0, 19},
			{Config{Hyper: map[string]float64{"nu": 0.3}}, 0, 20},
		},
		ref: []refCase{
			// every anchor has one positive: log(1 + Σ_n e^{aᵀn − aᵀp}), + ν/b·Σ‖φ‖² = 0.005.
			{"npair", Config{}, nil,
				(math.Log(1+math.Exp(-0.5)+math.Exp(-1.5))+math.Log(1+math.Exp(s3-0.5)+math.Exp(-1))+
					math.Log(2+math.Exp(s3))+math.Log(1+math.Exp(-1)+math.Exp(-0.5)))/4 + 0.005},
		},
		trainLR: 0.003,
	})
}
