package losses

import (
	"math"
	"testing"
)

func init() {
	ap := 0.0
	for _, rq := range refRanks() {
		ap += 1 / (1 + rq) / 4
	}
	addCases("smoothap", lossCases{
		sphere: true,
		grad: []gradCase{
			{Config{}, 1e-5, 51},
			{Config{Hyper: map[string]float64{"tau": 0.2}}, 0, 52},
		},
		ref: []refCase{
			{"smoothap", Config{}, nil, 1 - ap},
		},
		trainLR: 0.1,
		bad: []Config{
			{Hyper: map[string]float64{"tau": -1}},
		},
	})
}

func apLoss(b Batch, tau float64) float64 {
	S := batchCos(b)
	B := b.B
	total, nq := 0.0, 0
	for q := 0; q < B; q++ {
		ap, np := 0.0, 0
		for x := 0; x < B; x++ {
			if x == q || b.Labels[x] != b.Labels[q] {
				continue
			}
			np++
			num, den := 1.0, 1.0
			for z := 0; z < B; z++ {
				if z == q || z == x {
					continue
				}
				g := sigmoid((S[q*B+z] - S[q*B+x]) / tau)
				den += g
				if b.Labels[z] == b.Labels[q] {
					num += g
				}
			}
			ap += num / den
		}
		if np > 0 {
			total += ap / float64(np)
			nq++
		}
	}
	return 1 - total/float64(nq)
}

// TestSmoothAPMatchesLoops compares Smooth-AP with the loop implementation
// apLoss on random batches with several positives per query and a query
// without positives.
func TestSmoothAPMatchesLoops(t *testing.T) {
	for seed := int64(0); seed < 4; seed++ {
		b := randomBatch(seed, 13, 6, 3)
		b.Labels[12] = 7 // a query without positives
		for _, tau := range []float64{0.01, 0.5} {
			l := newLoss(t, "smoothap", Config{Hyper: map[string]float64{"tau": tau}})
			got, err := l.Forward(b, make([]float32, b.B*b.D))
			if err != nil {
				t.Fatal(err)
			}
			if want := apLoss(b, tau); math.Abs(got-want) > 1e-9 {
				t.Errorf("seed %d τ %v: Smooth-AP = %.12g, loops %.12g", seed, tau, got, want)
			}
		}
	}
}
