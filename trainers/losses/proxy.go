package losses

import (
	"fmt"
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// proxies is the machinery shared by the proxy/classification losses
// (ProxyNCA, normalised softmax, ArcFace): one learnable proxy ψ_c ∈ ℝ^D per
// training class, the cosine matrix between unit embeddings and unit proxies,
// and the one-hot label matrix as an input.
type proxies struct {
	base
	C, D int
}

// newProxies creates the C×D proxy Param, initialised by init(rng) from the
// config seed. c.NumClasses ≥ 2 and c.Dim ≥ 1 are required.
func newProxies(name string, c Config, init func(*rand.Rand) float64) (proxies, *param.Param, error) {
	if err := noMiner(name, c); err != nil {
		return proxies{}, nil, err
	}
	if c.NumClasses < 2 || c.Dim < 1 {
		return proxies{}, nil, fmt.Errorf("loss %s needs Config.NumClasses ≥ 2 and Config.Dim ≥ 1 (got %d, %d)", name, c.NumClasses, c.Dim)
	}
	rng := rand.New(rand.NewSource(c.Seed))
	p := &param.Param{Name: name + ".proxies", Shape: []int{c.NumClasses, c.Dim},
		Data: make([]float32, c.NumClasses*c.Dim), Grad: make([]float32, c.NumClasses*c.Dim), NoDecay: true}
	for i := range p.Data {
		p.Data[i] = float32(init(rng))
	}
	pr := proxies{base: base{name: name}, C: c.NumClasses, D: c.Dim}
	pr.r.params = []*param.Param{p}
	return pr, p, nil
}

// proxyCos returns the B×C cosines φ̂_iᵀψ̂_c and the B×C one-hot labels Y.
func (b *builder) proxyCos() (cos, Y *G.Node) {
	return matmulT(b.unitE(), normalize(b.P[0])), b.input("Y", b.B, b.P[0].Shape()[0])
}

// forward checks the batch against the proxies, fills Y and runs the graph;
// extra fills loss-specific inputs.
func (p *proxies) forward(bt Batch, grad []float32, extra func(n *net)) (float64, error) {
	if err := checkBatch(bt, grad, p.C, false); err != nil {
		return 0, fmt.Errorf("%s: %w", p.name, err)
	}
	if bt.D != p.D {
		return 0, fmt.Errorf("%s: batch dimension %d differs from the proxies' %d (Config.Dim)", p.name, bt.D, p.D)
	}
	n, err := p.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.name, err)
	}
	Y := n.in("Y")
	clear(Y)
	for i, y := range bt.Labels {
		Y[i*p.C+y] = 1
	}
	if extra != nil {
		extra(n)
	}
	return p.r.run(n, bt, grad)
}

// uniformInit draws from U(−1/√D, 1/√D) (PyTorch's default for class maps).
func uniformInit(D int) func(*rand.Rand) float64 {
	s := 1 / sqrtF(float64(D))
	return func(r *rand.Rand) float64 { return (2*r.Float64() - 1) * s }
}
