package losses

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
)

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

// TestMultiSimilarityMatchesGraph cross-checks the hand-written loss and
// dL/dE with eq. 12 written as a Gorgonia graph (masked log-sum-exp,
// automatic differentiation) on the same mined pairs.
func TestMultiSimilarityMatchesGraph(t *testing.T) {
	for _, hyper := range []map[string]float64{nil, {"alpha": 1.5, "beta": 10, "lambda": 0.2, "epsilon": 0.5}} {
		for seed := int64(1); seed <= 3; seed++ {
			l := newLoss(t, "multisimilarity", Config{Dim: 6, Hyper: hyper}).(*multiSimilarity)
			b := randomBatch(seed, 24, 6, 5)
			got := make([]float32, b.B*b.D)
			loss, err := l.Forward(b, got)
			if err != nil {
				t.Fatal(err)
			}
			r := runner{graph: func(g *builder) *G.Node {
				u := g.unitE()
				S := addS(matmulT(u, u), -l.lambda)
				pos := mulS(g.lse(mulS(S, -l.alpha), g.input("pos", g.B, g.B), true), 1/l.alpha)
				negs := mulS(g.lse(mulS(S, l.beta), g.input("neg", g.B, g.B), true), 1/l.beta)
				return total(mul(add(pos, negs), g.input("w", g.B)))
			}}
			n, err := r.get(shape{B: b.B, D: b.D})
			if err != nil {
				t.Fatal(err)
			}
			u := unitRows(b.Emb, b.B, b.D)
			P, N, w, anchors := l.mine(gram(u, b.B, u, b.B, b.D), b.Labels)
			if anchors == 0 {
				t.Fatalf("seed %d: no anchor kept", seed)
			}
			copy(n.in("pos"), P)
			copy(n.in("neg"), N)
			copy(n.in("w"), w)
			want := make([]float32, b.B*b.D)
			wantLoss, err := r.runAnchorMean(n, b, want, n.in("w"), anchors)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(loss-wantLoss) > 1e-12*(1+math.Abs(wantLoss)) {
				t.Fatalf("%v seed %d: loss %.17g, graph %.17g", hyper, seed, loss, wantLoss)
			}
			var scale float64
			for _, g := range want {
				scale = max(scale, math.Abs(float64(g)))
			}
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*scale {
					t.Fatalf("%v seed %d: dL/dE[%d] = %g, graph %g", hyper, seed, i, got[i], want[i])
				}
			}
		}
	}
}
