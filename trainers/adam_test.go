package trainers

import (
	"math"
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
