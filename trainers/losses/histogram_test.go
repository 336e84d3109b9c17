package losses

func init() {
	addCases("histogram", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 1e-5, 31},
			{Config{Hyper: map[string]float64{"bins": 5}}, 0, 32},
		},
		ref: []refCase{
			// R = 3 nodes −1, 0, 1 (Δ = 1). S⁺ = {½, 0}: h⁺ = (0, ¾, ¼), CDF⁺ = (0, ¾, 1).
			// S⁻ = {0, −1, √3/2, −½}: h⁻ = (3/2, 5/2 − √3/2, √3/2)/4. L = h⁻₂·¾ + h⁻₃.
			{"histogram R=3", Config{Hyper: map[string]float64{"bins": 3}}, nil,
				(2.5-s3)/4*0.75 + s3/4},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"bins": 1}},
			{Hyper: map[string]float64{"bins": 6.5}},
			{Miner: "distance"},
		},
	})
}
