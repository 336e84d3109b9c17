package losses

import "math"

func init() {
	e := math.Exp
	sq2 := math.Sqrt2
	// Both positive pairs see the same four negative terms.
	liftLog := math.Log(e(1-sq2) + e(-1) + e(1-d12) + e(1-math.Sqrt(3)))
	addCases("lifted", lossCases{
		grad: []gradCase{
			{Config{}, 0, 39},
			{Config{Hyper: map[string]float64{"margin": 3}}, 0, 40},
		},
		ref: []refCase{
			// J01 = log(…) + 1, J23 = log(…) + √2; L = (J01² + J23²)/(2·2).
			{"lifted", Config{}, nil,
				(math.Pow(liftLog+1, 2) + math.Pow(liftLog+sq2, 2)) / 4},
		},
		trainLR: 0.01,
		bad: []Config{
			{Hyper: map[string]float64{"margin": math.Inf(1)}},
		},
	})
}
