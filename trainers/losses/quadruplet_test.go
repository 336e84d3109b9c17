package losses

import (
	"math"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/miners"
)

func init() {
	sq2 := math.Sqrt2
	addCases("quadruplet", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 0, 33},
			{Config{Hyper: map[string]float64{"margin1": 0.3, "margin2": 1.5}}, 0, 34},
		},
		ref: []refCase{
			// Two classes: no second negative, the triplet term with γ₁ = 1 alone:
			// (1 − √2 + 1) + (1 − d12 + 1) + (√2 − d12 + 1) + (√2 − 2 + 1), mean.
			{"quadruplet (2 classes)", Config{}, nil,
				((2 - sq2) + (2 - d12) + (sq2 - d12 + 1) + (sq2 - 1)) / 4},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"margin2": 0}},
			{Miner: "nope"},
		},
	})
}

// TestQuadrupletSecondNegative: refBatch plus φ₄ = (0, −1) of class 2. With
// triplets (0,1,2) and (1,0,3) the only admissible l is 4: d(2,4) = 2,
// d(3,4) = √2; d(0,2) = √2, d(1,3) = √3. γ₂ = 1.5:
// L = ([1 − √2 + 1]₊ + [1 − √3 + 1]₊)/2 + ([1 − 2 + 1.5]₊ + [1 − √2 + 1.5]₊)/2.
func TestQuadrupletSecondNegative(t *testing.T) {
	b := refBatch()
	b.B, b.Emb, b.Labels = 5, append(b.Emb, 0, -1), append(b.Labels, 2)
	l := newLoss(t, "quadruplet", Config{Hyper: map[string]float64{"margin2": 1.5}})
	l.(interface{ setMiner(miners.Miner) }).setMiner(fixedMiner{miners.Triplets{A: []int32{0, 1}, P: []int32{1, 0}, N: []int32{2, 3}}})
	got, err := l.Forward(b, make([]float32, 10))
	if err != nil {
		t.Fatal(err)
	}
	want := (4-math.Sqrt2-math.Sqrt(3))/2 + (0.5+2.5-math.Sqrt2)/2
	if math.Abs(got-want) > 1e-6 {
		t.Fatalf("L = %.9g, want %.9g", got, want)
	}
}
