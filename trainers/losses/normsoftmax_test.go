package losses

import "math"

func init() {
	addCases("normsoftmax", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{NumClasses: gradC}, 0, 23},
			{Config{NumClasses: 4, Hyper: map[string]float64{"temperature": 0.5}}, 0, 24},
		},
		ref: []refCase{
			// log Σ_c e^{cos/T} − cos_y/T; cosines (1,0), (½,√3/2), (0,1), (−1,0).
			{"normsoftmax T=0.5", Config{NumClasses: 2, Dim: 2, Hyper: map[string]float64{"temperature": 0.5}},
				setProxies([2]float32{1, 0}, [2]float32{0, 1}), (3*math.Log1p(math.Exp(-2)) + math.Log1p(math.Exp(2*s3-1))) / 4},
			{"normsoftmax T=0.05", Config{NumClasses: 2, Dim: 2},
				setProxies([2]float32{1, 0}, [2]float32{0, 1}), (3*math.Log1p(math.Exp(-20)) + math.Log1p(math.Exp(20*s3-10))) / 4},
		},
		trainLR: 0.1,
	})
}
