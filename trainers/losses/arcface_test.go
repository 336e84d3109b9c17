package losses

import "testing"

func init() {
	addCases("arcface", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{NumClasses: gradC}, 0, 25},
			{Config{NumClasses: 4, Hyper: map[string]float64{"scale": 4, "margin": 0.3}}, 0, 26},
		},
		ref: []refCase{
			// centres (0,1) for class 0, (1,0) for class 1; target cosines 0, √3/2, 0, −1 (the last
			// has θ + m > π: target logit 16(−1 − ½ sin ½)). Values from an acos-based evaluation.
			{"arcface", Config{NumClasses: 2, Dim: 2},
				setProxies([2]float32{0, 1}, [2]float32{1, 0}), 16.93023118504592},
		},
		trainLR: 0.01,
		bad: []Config{
			{NumClasses: 4},
		},
	})
}

// TestArcFaceFallbackGradient checks the gradient where θ + m > π.
func TestArcFaceFallbackGradient(t *testing.T) {
	l := newLoss(t, "arcface", Config{NumClasses: 3, Dim: 5, Seed: 2})
	b := randomBatch(5, 8, 5, 3)
	w := l.Params()[0].Data
	for k := 0; k < 5; k++ { // sample 0 (class 0) opposite its centre
		b.Emb[k] = -w[k] + 0.01*b.Emb[k]
	}
	gradCheck(t, l, b, 1)
}
