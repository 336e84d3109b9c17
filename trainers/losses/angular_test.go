package losses

import "math"

func init() {
	e := math.Exp
	addCases("angular", lossCases{
		grad: []gradCase{
			{Config{}, 0, 27},
			{Config{Hyper: map[string]float64{"alpha": 0.6, "lambda": 0.5, "nu": 0.1}}, 0, 28},
		},
		ref: []refCase{
			// N-pair part as in npair_test.go; angular part with tan²α = 1:
			// f = 4(φ_a + φ_p)ᵀφ_n − 4φ_aᵀφ_p; anchors 0, 1: log(1 + e^{4·√3/2 − 2} + e^{−8});
			// anchors 2, 3: log(1 + e^{−4} + e^{4(√3/2 − ½)}); λ = 2.
			{"angular", Config{}, nil,
				(math.Log(1+e(-0.5)+e(-1.5))+math.Log(1+e(s3-0.5)+e(-1))+math.Log(2+e(s3))+math.Log(1+e(-1)+e(-0.5)))/4 + 0.005 +
					2*(2*math.Log(1+e(4*s3-2)+e(-8))+2*math.Log(1+e(-4)+e(4*(s3-0.5))))/4},
		},
		trainLR: 0.01,
		bad: []Config{
			{Hyper: map[string]float64{"alpha": 2}},
			{Hyper: map[string]float64{"lambda": -1}},
		},
	})
}
