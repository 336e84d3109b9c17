package losses

func init() {
	addCases("proxytriplet", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{NumClasses: gradC}, 0, 41},
			{Config{NumClasses: 5, Hyper: map[string]float64{"margin": 0.3}}, 0, 42},
		},
		ref: []refCase{
			// Proxies (1,0), (0,1): [2cos_other − 2cos_y + 1]₊ is non-zero only for sample 1: 2·√3/2.
			{"proxytriplet", Config{NumClasses: 2, Dim: 2},
				setProxies([2]float32{1, 0}, [2]float32{0, 1}), 2 * s3 / 4},
		},
		trainLR: 0.3,
		bad: []Config{
			{NumClasses: 4},
		},
	})
}
