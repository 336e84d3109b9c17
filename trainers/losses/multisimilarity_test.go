package losses

import "math"

func init() {
	addCases("multisimilarity", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 17},
			{Config{Hyper: map[string]float64{"alpha": 1.5, "beta": 10, "lambda": 0.2, "epsilon": 0.5}}, 0, 18},
		},
		ref: []refCase{
			// ε = 0.6 keeps P̃/Ñ: 0:{1}/{2}, 1:{0}/{2}, 2:{3}/{0,1}, 3:{2}/{1};
			// ½log(1+Σe^{−2(S−½)}) + 1/40·log(1+Σe^{40(S−½)}), mean over 4 anchors.
			{"multisimilarity", Config{Hyper: map[string]float64{"epsilon": 0.6}}, nil,
				(0.5*math.Log(2) + 0.5*math.Log(2) + math.Log1p(math.Exp(-20))/40 + math.Log1p(math.Exp(40*(s3-0.5)))/40 +
					0.5*math.Log(1+math.E) + math.Log(1+math.Exp(-20)+math.Exp(40*(s3-0.5)))/40 +
					0.5*math.Log(1+math.E) + math.Log1p(math.Exp(-40))/40) / 4},
		},
		trainLR: 0.1,
		bad: []Config{
			{Miner: "semihard"},
		},
	})
}
