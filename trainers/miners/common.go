package miners

import (
	"fmt"
	"math"
	"math/rand"
)

// DimSetter is implemented by miners whose selection rule depends on the
// embedding dimension (distance-weighted sampling, Roth et al. 2020 eq. 23). Losses
// call SetDim with the batch dimension before Mine.
type DimSetter interface{ SetDim(d int) }

// MarginSetter is implemented by miners whose rule uses the loss margin
// (semihard, Roth et al. 2020 eq. 20). Losses call SetMargin with their margin γ.
type MarginSetter interface{ SetMargin(m float64) }

// Check validates the inputs of Mine: a square B×B matrix of finite,
// non-negative distances, B labels, a non-nil rng. Mine itself cannot return
// an error: on input that fails Check it returns no triplets.
func Check(dist []float32, labels []int, rng *rand.Rand) error {
	if err := checkShape(dist, labels); err != nil {
		return err
	}
	if rng == nil {
		return fmt.Errorf("miners: nil *rand.Rand (stochastic miners need a seeded source)")
	}
	return nil
}

// checkShape is Check without the rng requirement (deterministic miners).
func checkShape(dist []float32, labels []int) error {
	b := len(labels)
	if b == 0 {
		return fmt.Errorf("miners: empty batch")
	}
	if len(dist) != b*b {
		return fmt.Errorf("miners: distance matrix has %d entries, want %d×%d = %d", len(dist), b, b, b*b)
	}
	for i, d := range dist {
		if math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) || d < 0 {
			return fmt.Errorf("miners: distance[%d][%d] = %v is not finite and non-negative", i/b, i%b, d)
		}
	}
	return nil
}

// groups holds, per anchor, the indices of its positives (same label, other
// index) and negatives (other label).
type groups struct {
	pos, neg [][]int
}

// split builds the positive and negative index lists of every anchor.
func split(labels []int) groups {
	b := len(labels)
	g := groups{pos: make([][]int, b), neg: make([][]int, b)}
	for a := 0; a < b; a++ {
		for j := 0; j < b; j++ {
			switch {
			case j == a:
			case labels[j] == labels[a]:
				g.pos[a] = append(g.pos[a], j)
			default:
				g.neg[a] = append(g.neg[a], j)
			}
		}
	}
	return g
}

// ok reports whether the inputs pass Check (Mine returns nothing otherwise).
func ok(dist []float32, labels []int, rng *rand.Rand) bool {
	return Check(dist, labels, rng) == nil
}

// pick returns a uniformly random element of s (s non-empty).
func pick(s []int, rng *rand.Rand) int { return s[rng.Intn(len(s))] }

// each calls f, in index order, for every anchor a of the batch that has
// a positive and a negative, with a's row of the b×b distance matrix dist
// and its positive and negative index lists.
func (g groups) each(dist []float32, f func(a int, row []float32, pos, neg []int)) {
	b := len(g.pos)
	for a := range g.pos {
		if len(g.pos[a]) == 0 || len(g.neg[a]) == 0 {
			continue
		}
		f(a, dist[a*b:(a+1)*b], g.pos[a], g.neg[a])
	}
}

// filter returns the elements of s for which keep is true.
func filter(s []int, keep func(j int) bool) []int {
	var out []int
	for _, j := range s {
		if keep(j) {
			out = append(out, j)
		}
	}
	return out
}

// add appends one triplet.
func (t *Triplets) add(a, p, n int) {
	t.A = append(t.A, int32(a))
	t.P = append(t.P, int32(p))
	t.N = append(t.N, int32(n))
}
