package trainers

import (
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/trainers/param"
)

// Adam is the optimiser of Kingma & Ba (2015, Alg. 1) with bias correction
// and coupled L2 weight decay (g ← g + λθ, as torch.optim.Adam's
// weight_decay, which Roth et al. 2020 uses):
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,
//	θ ← θ − lr·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε).
//
// The rate of a Param is Param.LR if > 0, else base·Param.LRScale (LRScale
// 0 means 1); both are multiplied by the schedule factor.
type Adam struct {
	Beta1, Beta2, Eps float64
	WeightDecay       float64
	T                 int64 // steps taken
	M, V              [][]float32
	params            []*param.Param
}

// NewAdam prepares moment buffers for params with PyTorch's defaults
// β₁ = 0.9, β₂ = 0.999, ε = 1e-8.
func NewAdam(params []*param.Param, weightDecay float64) *Adam {
	a := &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay, params: params}
	for _, p := range params {
		a.M = append(a.M, make([]float32, len(p.Data)))
		a.V = append(a.V, make([]float32, len(p.Data)))
	}
	return a
}

// Step applies one update with base learning rate lr and schedule factor.
func (a *Adam) Step(lr, factor float64) error {
	a.T++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.T))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.T))
	for k, p := range a.params {
		if len(p.Grad) != len(p.Data) {
			return fmt.Errorf("adam: parameter %s has %d gradients for %d values", p.Name, len(p.Grad), len(p.Data))
		}
		rate := lr
		if p.LRScale != 0 {
			rate = lr * p.LRScale
		}
		if p.LR > 0 {
			rate = p.LR
		}
		rate *= factor
		step := rate / bc1
		wd := a.WeightDecay
		if p.NoDecay {
			wd = 0
		}
		c := adamConsts{wd: wd, b1: a.Beta1, c1: 1 - a.Beta1, b2: a.Beta2, c2: 1 - a.Beta2,
			step: step, invBc2: 1 / math.Sqrt(bc2), eps: a.Eps}
		m, v := a.M[k], a.V[k]
		// Elementwise, so the update is the same on any split: large
		// tensors are shared among the cores (adamBlock elements at least
		// per goroutine). NaN/Inf in any gradient makes the sum non-finite.
		sum := parallelSum(len(p.Grad), func(lo, hi int) float64 { return adamUpdate(&c, p.Data, p.Grad, m, v, lo, hi) })
		if !finite(sum) {
			return fmt.Errorf("adam: non-finite gradient in %s", p.Name)
		}
	}
	return nil
}

// adamConsts are the per-parameter constants of the update, in the order
// adam_amd64.s reads them.
type adamConsts struct {
	wd, b1, c1, b2, c2 float64 // c1 = 1−β₁, c2 = 1−β₂
	step, invBc2, eps  float64 // lr/(1−β₁ᵗ), 1/√(1−β₂ᵗ), ε
}

// adamScalar updates elements [lo, hi) in float64 and returns the sum of
// their gradients.
func adamScalar(c *adamConsts, data, grad, m, v []float32, lo, hi int) (sum float64) {
	for i := lo; i < hi; i++ {
		g32 := grad[i]
		th := float64(data[i])
		g := float64(g32) + c.wd*th
		sum += float64(g32)
		mi := c.b1*float64(m[i]) + c.c1*g
		vi := c.b2*float64(v[i]) + c.c2*g*g
		m[i], v[i] = float32(mi), float32(vi)
		data[i] = float32(th - c.step*mi/(math.Sqrt(vi)*c.invBc2+c.eps))
	}
	return sum
}

// adamBlock is the fewest elements worth a goroutine in Adam.Step.
const adamBlock = 1 << 15

// parallelSum runs f over [0, n) in up to GOMAXPROCS contiguous ranges of
// at least adamBlock elements and adds up what they return (in range order).
func parallelSum(n int, f func(lo, hi int) float64) float64 {
	t := min(parallel.Threads(0), n/adamBlock)
	if t <= 1 {
		return f(0, n)
	}
	per := (n + t - 1) / t
	sums := make([]float64, t)
	parallel.For(t, t, func(b int) { sums[b] = f(b*per, min((b+1)*per, n)) })
	var s float64
	for _, x := range sums {
		s += x
	}
	return s
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
