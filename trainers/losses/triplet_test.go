package losses

func init() {
	addCases("triplet", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 13},
			{Config{Hyper: map[string]float64{"margin": 0.5, "avg_nonzero": 1}}, 0, 14},
		},
		ref: []refCase{
			// [d_ap − d_an + 0.2]₊: (0,1,2) 1 − √2 + .2 < 0; (1,0,2) 1 − .5176381 + .2 = .6823619;
			// (2,3,1) √2 − .5176381 + .2 = 1.0965755; (3,2,0) √2 − 2 + .2 < 0. Mean over 4.
			{"triplet mean", Config{}, nil, (0.6823619097949585 + 1.0965754721680537) / 4},
			{"triplet non-zero mean", Config{Hyper: map[string]float64{"avg_nonzero": 1}}, nil, (0.6823619097949585 + 1.0965754721680537) / 2},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"margn": 1}},
			{Hyper: map[string]float64{"margin": -1}},
			{Hyper: map[string]float64{"avg_nonzero": 0.5}},
			{Miner: "nope"},
		},
	})
}
