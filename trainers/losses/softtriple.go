package losses

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/trainers/param"
	G "gorgonia.org/gorgonia"
)

// softTriple is SoftTriple (Qian et al. 2019), Roth et al. 2020 §A.1 eqs. 16–18: K
// learnable unit centres ψ_c^k per class, the class similarity of a unit
// embedding φ_i is the softmax-weighted mean of its centre similarities,
//
//	S_i^c = Σ_k softmax_k(φ_iᵀψ_c^k / γ) · φ_iᵀψ_c^k                  (eq. 16)
//
// (eq. 16 as printed drops the trailing φ_iᵀψ_c^k factor; Qian et al. and
// Roth et al.'s code have it), the cross-entropy with a margin δ on the true class,
//
//	L_base = −1/b Σ_i log( e^{λ(S_i^{y_i} − δ)} / (e^{λ(S_i^{y_i} − δ)} + Σ_{c≠y_i} e^{λ S_i^c}) )   (eq. 17)
//
// and a regulariser that merges redundant centres,
//
//	L = L_base + τ · Σ_c Σ_{k<k'} √(2 + ε − 2ψ_c^kᵀψ_c^k') / (C·K·(K−1))   (eq. 18)
//
// with the hyper-parameters τ (tau), λ (lambda), δ (delta), γ (gamma; it
// enters as 1/γ, as in eq. 16 and Qian et al.; Roth et al.'s code multiplies
// by its γ option, and its run scripts pass 1/γ), K (centers) centres per
// class and the centre learning rate proxy_lr (defaults: Roth et al. 2020,
// from Qian et al.'s code). The regulariser
// counts each unordered pair once as Qian et al. and their code do (eq. 18 as
// printed sums ordered pairs, twice as much, for the same τ); ε = 10⁻⁵ keeps
// the gradient finite for coinciding centres (their code uses 2.0001). The
// centres form one (K·C)×D Param, row k·C + c holding ψ_c^k, initialised
// U(−1/√(CK), 1/√(CK)) as in that code.
type softTriple struct {
	base
	C, D, K                         int
	tau, lambda, delta, gamma, rEps float64
}

func init() {
	Register(Info{
		Name:    "softtriple",
		Summary: "CE of λ(S_i^c − δ[c=y]), S = softmax_k(φᵀψ_c^k/γ)-weighted φᵀψ_c^k, + τ·centre-merging regulariser; τ={{tau}} λ={{lambda}} δ={{delta}} γ={{gamma}} K={{centers}}, centre lr {{proxy_lr}} (Qian 2019; Roth et al. 2020 eqs. 16–18)",
		Hyper:   map[string]float64{"tau": 0.2, "lambda": 8, "delta": 0.01, "gamma": 0.1, "centers": 2, "proxy_lr": 1e-5},
		Sphere:  true,
		New:     newSoftTriple,
	})
}

func newSoftTriple(c Config) (Loss, error) {
	l := &softTriple{base: base{name: "softtriple"}, C: c.NumClasses, D: c.Dim, rEps: 1e-5,
		tau: c.hyperParam("tau"), lambda: c.hyperParam("lambda"), delta: c.hyperParam("delta"), gamma: c.hyperParam("gamma")}
	lr := c.hyperParam("proxy_lr")
	if err := positive(map[string]float64{"lambda": l.lambda, "gamma": l.gamma, "proxy_lr": lr}); err != nil {
		return nil, err
	}
	if err := checkFinite(map[string]float64{"tau": l.tau, "delta": l.delta}); err != nil {
		return nil, err
	}
	if l.tau < 0 {
		return nil, fmt.Errorf("hyper-parameter tau must be ≥ 0, got %v", l.tau)
	}
	var err error
	if l.K, err = intHyper(c, "centers", 1); err != nil {
		return nil, err
	}
	if err := noMiner(l.name, c); err != nil {
		return nil, err
	}
	if c.NumClasses < 2 || c.Dim < 1 {
		return nil, fmt.Errorf("loss softtriple needs Config.NumClasses ≥ 2 and Config.Dim ≥ 1 (got %d, %d)", c.NumClasses, c.Dim)
	}
	n := l.K * l.C
	p := &param.Param{Name: "softtriple.centers", Shape: []int{n, l.D}, Data: make([]float32, n*l.D),
		Grad: make([]float32, n*l.D), LR: lr, NoDecay: true}
	rng := rand.New(rand.NewSource(c.Seed))
	s := 1 / math.Sqrt(float64(n))
	for i := range p.Data {
		p.Data[i] = float32((2*rng.Float64() - 1) * s)
	}
	l.r.params = []*param.Param{p}
	l.r.graph = l.graph
	return l, nil
}

func (l *softTriple) graph(b *builder) *G.Node {
	u := b.unitE()
	centres := make([]*G.Node, l.K) // unit ψ^k, C×D each
	cos := make([]*G.Node, l.K)     // φ̂ᵀψ̂^k, B×C each
	for k := range centres {
		idx := b.index(fmt.Sprintf("centres%d", k), l.C)
		for c := range l.C {
			b.n.ints[fmt.Sprintf("centres%d", k)][c] = k*l.C + c
		}
		centres[k] = normalize(gather(b.P[0], idx))
		cos[k] = matmulT(u, centres[k])
	}
	m := cos[0]
	for _, c := range cos[1:] {
		m = maxOf(m, c)
	}
	var num, den *G.Node
	for _, c := range cos {
		e := exp(mulS(sub(c, m), 1/l.gamma))
		if num == nil {
			num, den = mul(e, c), e
		} else {
			num, den = add(num, mul(e, c)), add(den, e)
		}
	}
	S := div(num, den) // S_i^c, B×C
	Y := b.input("Y", b.B, l.C)
	logits := mulS(sub(S, mulS(Y, l.delta)), l.lambda)
	cost := mulS(total(sub(b.lse(logits, nil, false), pick(logits, Y))), 1/float64(b.B))
	if l.K < 2 || l.tau == 0 {
		return cost
	}
	var reg *G.Node
	for k := 0; k < l.K; k++ {
		for k2 := k + 1; k2 < l.K; k2++ {
			r := total(sqrt(addS(mulS(rowSum(mul(centres[k], centres[k2])), -2), 2+l.rEps)))
			if reg == nil {
				reg = r
			} else {
				reg = add(reg, r)
			}
		}
	}
	return add(cost, mulS(reg, l.tau/float64(l.C*l.K*(l.K-1))))
}

// Forward implements Loss.
func (l *softTriple) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, l.C, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	if bt.D != l.D {
		return 0, fmt.Errorf("%s: batch dimension %d differs from the centres' %d (Config.Dim)", l.name, bt.D, l.D)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	Y := n.in("Y")
	clear(Y)
	for i, y := range bt.Labels {
		Y[i*l.C+y] = 1
	}
	return l.r.run(n, bt, grad)
}
