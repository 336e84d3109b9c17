package trainers

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/trainers/param"
)

// TestAdamMatchesHandComputed runs three steps on three parameters
// (decayed, NoDecay, absolute LR) with fixed gradients and compares with
// Adam's formulas evaluated independently in float64.
func TestAdamMatchesHandComputed(t *testing.T) {
	ps := []*param.Param{
		{Name: "w", Data: []float32{0.5, -1}, Grad: make([]float32, 2)},
		{Name: "b", Data: []float32{0.1}, Grad: make([]float32, 1), NoDecay: true},
		{Name: "proxy", Data: []float32{2}, Grad: make([]float32, 1), LR: 0.01},
		{Name: "scaled", Data: []float32{1}, Grad: make([]float32, 1), LRScale: 10},
	}
	grads := [][][]float32{
		{{0.2, -0.4}, {1}, {-3}, {0.5}},
		{{0.1, 0.3}, {-1}, {2}, {0.5}},
		{{-0.5, 0}, {0.25}, {1}, {-0.5}},
	}
	const lr, wd, factor = 1e-3, 0.1, 0.5
	a := NewAdam(ps, wd)
	type st struct{ th, m, v float64 }
	ref := [][]st{}
	for _, p := range ps {
		var r []st
		for _, v := range p.Data {
			r = append(r, st{th: float64(v)})
		}
		ref = append(ref, r)
	}
	for step, gs := range grads {
		for k, p := range ps {
			copy(p.Grad, gs[k])
		}
		if err := a.Step(lr, factor); err != nil {
			t.Fatal(err)
		}
		tt := float64(step + 1)
		for k, p := range ps {
			rate := lr
			if p.LRScale != 0 {
				rate *= p.LRScale
			}
			if p.LR > 0 {
				rate = p.LR
			}
			rate *= factor
			for i := range p.Data {
				s := &ref[k][i]
				g := float64(gs[k][i])
				if !p.NoDecay {
					g += wd * s.th
				}
				s.m = 0.9*s.m + 0.1*g
				s.v = 0.999*s.v + 0.001*g*g
				mh := s.m / (1 - math.Pow(0.9, tt))
				vh := s.v / (1 - math.Pow(0.999, tt))
				s.th -= rate * mh / (math.Sqrt(vh) + 1e-8)
				if math.Abs(s.th-float64(p.Data[i])) > 1e-6 {
					t.Fatalf("step %d %s[%d]: got %v, want %v", step+1, p.Name, i, p.Data[i], s.th)
				}
			}
		}
	}
	ps[0].Grad[0] = float32(math.NaN())
	if err := a.Step(lr, 1); err == nil {
		t.Fatal("NaN gradient accepted")
	}
}

func TestStepDecay(t *testing.T) {
	s := StepDecay{Steps: []int{2, 5}, Gamma: 0.1}
	want := []float64{1, 1, 0.1, 0.1, 0.1, 0.01, 0.01}
	for e, w := range want {
		if got := s.Factor(e); math.Abs(got-w) > 1e-15 {
			t.Fatalf("epoch %d: factor %v, want %v", e, got, w)
		}
	}
}

// TestAdamVectorMatchesScalar checks that the vector update (adam_amd64.s)
// writes the same bits as the Go loop, on lengths that leave a tail, with
// and without weight decay, and that a NaN or Inf gradient still shows in
// the returned sum.
func TestAdamVectorMatchesScalar(t *testing.T) {
	if !adamVector {
		t.Skip("no vector update in this build or DMLBENCH_KERNEL")
	}
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{1, 3, 4, 5, 8, 37, 1000} {
		for _, wd := range []float64{0, 4e-4} {
			c := adamConsts{wd: wd, b1: 0.9, c1: 1 - 0.9, b2: 0.999, c2: 1 - 0.999,
				step: 1e-3 / (1 - 0.9*0.9), invBc2: 1 / math.Sqrt(1-0.999*0.999), eps: 1e-8}
			var in [4][]float32 // data, grad, m, v
			for j := range in {
				in[j] = make([]float32, n)
				for i := range in[j] {
					x := float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(9)-6)))
					if j == 3 {
						x = x * x // second moments are ≥ 0
					}
					in[j][i] = x
				}
			}
			run := func(f func(c *adamConsts, data, grad, m, v []float32, lo, hi int) float64) ([4][]float32, float64) {
				var o [4][]float32
				for j := range in {
					o[j] = append([]float32(nil), in[j]...)
				}
				return o, f(&c, o[0], o[1], o[2], o[3], 0, n)
			}
			got, gs := run(adamUpdate)
			want, ws := run(adamScalar)
			for j := range got {
				for i := range got[j] {
					if math.Float32bits(got[j][i]) != math.Float32bits(want[j][i]) {
						t.Fatalf("n=%d wd=%g: array %d element %d: vector %v, scalar %v", n, wd, j, i, got[j][i], want[j][i])
					}
				}
			}
			if math.Abs(gs-ws) > 1e-9*(1+math.Abs(ws)) {
				t.Fatalf("n=%d: gradient sum %v, scalar %v", n, gs, ws)
			}
		}
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		g := make([]float32, 16)
		g[5] = bad
		d, m, v := make([]float32, 16), make([]float32, 16), make([]float32, 16)
		c := adamConsts{b1: 0.9, c1: 0.1, b2: 0.999, c2: 0.001, step: 1e-3, invBc2: 1, eps: 1e-8}
		if s := adamUpdate(&c, d, g, m, v, 0, 16); finite(s) {
			t.Fatalf("gradient %v: sum %v is finite", bad, s)
		}
	}
}
