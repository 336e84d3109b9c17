package losses

func init() {
	addCases("proxynca", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{NumClasses: gradC}, 0, 21},
			{Config{NumClasses: 4, Hyper: map[string]float64{"scale": 1.5}}, 0, 22},
		},
		ref: []refCase{
			// proxies (1,0), (0,1), s = 1: d = 2(1 − cos); with 2 classes the
			// per-sample loss is d_y − d_other: −2, 2(1−½) − 2(1−√3/2), −2, −2.
			{"proxynca", Config{NumClasses: 2, Dim: 2, Hyper: map[string]float64{"scale": 1}},
				setProxies([2]float32{1, 0}, [2]float32{0, 1}), (-6 + 1 - 2*(1-s3)) / 4},
		},
		trainLR: 0.01,
		bad: []Config{
			{NumClasses: 1, Dim: 4},
		},
	})
}
