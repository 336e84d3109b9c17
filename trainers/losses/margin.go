package losses

import (
	"fmt"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// margin is the margin loss of Wu et al. (2017), Roth et al. 2020 §A.1 eq. 10, on
// mined triplets 𝒯 (default miner: distance-weighted, as in Wu et al. and
// Roth et al. 2020):
//
//	L = 1/N⁺ Σ_{(a,p,n)∈𝒯} ( [γ + d(φ_a, φ_p) − β]₊ + [γ − d(φ_a, φ_n) + β]₊ )
//
// with d the Euclidean distance of unit-normalised embeddings, γ the margin,
// N⁺ the number of non-zero terms (Wu et al.'s normalisation), and β a
// learnable boundary: initial value beta (the default is Roth et al. 2020's
// strongest baseline, suppl. Tab. 6; it also runs 0.6), learning rate
// beta_lr through Param.LR. With
// class_beta = 1 there is one β per class, β_{y_a} (Wu et al.'s β^(class));
// it needs Config.NumClasses.
type margin struct {
	tuples
	gamma    float64
	perClass bool
}

func init() {
	Register(Info{
		Name:    "margin",
		Summary: "Σ[γ + d(a,p) − β]₊ + [γ − d(a,n) + β]₊ / #non-zero, β learnable (init {{beta}}, lr {{beta_lr}}), γ = {{margin}} (Wu 2017; Roth et al. 2020 eq. 10)",
		Hyper:   map[string]float64{"margin": 0.2, "beta": 1.2, "beta_lr": 5e-4, "class_beta": 0},
		Miner:   "distance",
		Sphere:  true,
		New:     newMargin,
	})
}

func newMargin(c Config) (Loss, error) {
	l := &margin{gamma: c.hyperParam("margin")}
	beta, lr := c.hyperParam("beta"), c.hyperParam("beta_lr")
	if err := positive(map[string]float64{"margin": l.gamma, "beta": beta, "beta_lr": lr}); err != nil {
		return nil, err
	}
	var err error
	if l.perClass, err = hyperFlag(c, "class_beta"); err != nil {
		return nil, err
	}
	if l.tuples, err = newTuples("margin", c, "distance", l.gamma); err != nil {
		return nil, err
	}
	n, shp := 1, []int{1}
	if l.perClass {
		if c.NumClasses < 1 {
			return nil, fmt.Errorf("loss margin: class_beta = 1 needs NumClasses > 0")
		}
		n, l.numClasses = c.NumClasses, c.NumClasses
		shp = []int{n, 1}
	}
	p := &param.Param{Name: "margin.beta", Shape: shp, Data: make([]float32, n), Grad: make([]float32, n), LR: lr, NoDecay: true}
	for i := range p.Data {
		p.Data[i] = float32(beta)
	}
	l.r.params = []*param.Param{p}
	l.r.graph = l.graph
	return l, nil
}

func (l *margin) graph(b *builder) *G.Node {
	t := b.triplets()
	beta := must(G.Sum(b.P[0])) // the single β (a scalar)
	if l.perClass {             // β_{y_a}: gather the (C×1) rows by anchor label
		beta = must(G.Reshape(gather(b.P[0], b.index("ya", b.T)), tensor.Shape{b.T}))
	}
	pos := mul(relu(addS(sub(t.dap, beta), l.gamma)), t.valid)
	negs := mul(relu(addS(sub(beta, t.dan), l.gamma)), t.valid)
	b.meanNonZero(pos, negs)
	return add(total(pos), total(negs))
}

// Forward implements Loss.
func (l *margin) Forward(b Batch, grad []float32) (float64, error) { return l.forward(b, grad) }
