package losses

func init() {
	addCases("snr", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 35},
			{Config{Hyper: map[string]float64{"margin": 2, "lambda": 0.3}}, 0, 36},
		},
		ref: []refCase{
			// D = 2: var(x) = (x₁ − x₂)²/4, so d_S = (v₁ − v₂)²/(a₁ − a₂)². Only (1,0,2) is
			// non-zero: a = (½, √3/2), (a₁−a₂)² = 1 − √3/2, p−a: 1 + √3/2, n−a: (3/2 − √3/2)².
			// Regulariser λ/b Σ|φ₁ + φ₂| = 0.005/4·(1 + ½ + √3/2 + 1 + 1).
			{"snr", Config{}, nil,
				((1+s3)-(1.5-s3)*(1.5-s3))/(1-s3) + 0.2 + 0.005/4*(3.5+s3)},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"lambda": -0.1}},
		},
	})
}
