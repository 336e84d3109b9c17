package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// recallK is the Recall@k surrogate loss RS@k of Patel et al. 2024 (§3.2, eqs. 4–7)
// on unit embeddings with cosine similarities s. For a query q with positives
// P_q in the rest of the batch, the rank of a positive x is smoothed by a
// sigmoid on similarity differences and the "x is in the top k" indicator by
// a sigmoid on ranks,
//
//	r̃(q, x) = Σ_{z∈𝓑∖{q,x}} σ_{τ₂}(s_qz − s_qx),   σ_τ(u) = 1/(1 + e^{−u/τ})   (eqs. 2, 4)
//	R̃^k(q)  = min( Σ_{x∈P_q} σ_{τ₁}(k − 1 − r̃(q, x)), k ) / min(k, |P_q|)     (eq. 5 + §3.2 end)
//	L       = 1/|Q| Σ_{q∈Q} 1/|K| Σ_{k∈K} (1 − R̃^k(q))                         (eqs. 6–7)
//
// with the division by min(k, |P_q|) and the clip of the numerator at k as
// the paper prescribes for training, Q the queries with at least one
// positive, τ₂ = 0.01, τ₁ = 1 and K = {1, 2, 4, 8, 16} (the powers of two up
// to k_max; k_max = 0 takes 16, Patel et al. 2024 without SiMix). The clip min(v, k) = v − [v − k]₊
// has gradient 0 above k. The graph works on a (positive pairs × B) grid.
// With simix = 1 the batch is extended by SiMix virtual examples (simix.go)
// and K = {1, 2, 4, 8, 12, …, k_max}, k_max = 32 when k_max is 0 (Patel et al. 2024 §4).
type recallK struct {
	base
	tau1, tau2 float64
	ks         []int
	simix      bool
}

func init() {
	Register(Info{
		Name:    "recallk",
		Summary: "RS@k: 1 − mean_k min(Σ_P σ_{τ₁}(k−1−Σ_z σ_{τ₂}(s_qz−s_qx)), k)/min(k,|P|), τ₁ = 1, τ₂ = 0.01, K = {1,2,4,8,16} (Patel et al. 2024 eqs. 5–7)",
		Hyper:   map[string]float64{"tau1": 1, "tau2": 0.01, "k_max": 0, "simix": 0},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &recallK{base: base{name: "recallk"}, tau1: c.Hyper["tau1"], tau2: c.Hyper["tau2"]}
			if err := positive(map[string]float64{"tau1": l.tau1, "tau2": l.tau2}); err != nil {
				return nil, err
			}
			var err error
			if l.simix, err = hyperFlag(c, "simix"); err != nil {
				return nil, err
			}
			kmax, err := intHyper(c, "k_max", 0)
			if err != nil {
				return nil, err
			}
			if kmax == 0 { // the default: 16, or 32 with SiMix
				kmax = 16
				if l.simix {
					kmax = 32
				}
			}
			if l.simix {
				l.ks = simixKs(kmax)
			} else {
				for k := 1; k <= kmax; k *= 2 {
					l.ks = append(l.ks, k)
				}
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

// rankGrid declares the inputs of a (pairs × B) ranking grid and returns, per
// pair t = (q, x), the soft rank count Σ_z m_tz·σ_τ(s_qz − s_qx) for each mask
// name given (T×B masks over z), in order. With SiMix (b.V > 0) the grid is
// T × (B+V): the rows of the unit batch are extended by the V virtual rows of
// the input "mix" (see simix.go), so s covers original and virtual examples.
func (b *builder) rankGrid(tau float64, masks ...string) []*G.Node {
	u, n := b.unitE(), b.gridRows()
	if b.V > 0 {
		u = must(G.Mul(b.input("mix", n, b.B), u))
	}
	Sq := gather(matmulT(u, u), b.index("q", b.T)) // T×n rows s_q·
	sqx := pick(Sq, b.input("x1", b.T, n))         // s_qx
	sg := sigm(mulS(colSub(Sq, sqx), 1/tau))       // σ_τ(s_qz − s_qx)
	out := make([]*G.Node, len(masks))
	for i, m := range masks {
		out[i] = rowSum(mul(sg, b.input(m, b.T, n)))
	}
	return out
}

// gridRows is the number of examples of the ranking grid: B, plus the SiMix
// virtual examples.
func (b *builder) gridRows() int { return b.B + b.V }

func (l *recallK) graph(b *builder) *G.Node {
	r := b.rankGrid(l.tau2, "z")[0]
	agg := b.input("agg", b.gridRows(), b.T) // agg_qt = 1 if pair t has query q
	var sum *G.Node
	for _, k := range l.ks {
		num := mv(agg, sigm(mulS(addS(neg(r), float64(k-1)), 1/l.tau1)))
		term := total(mul(minS(num, float64(k)), b.input(fmt.Sprintf("inv%d", k), b.gridRows())))
		if sum == nil {
			sum = term
		} else {
			sum = add(sum, term)
		}
	}
	return addS(neg(sum), 1)
}

// fillRankGrid fills q, x1, agg and the masks "z" (z ∉ {q, x}) and, when
// declared, "zpos" (z ∈ P_q ∖ {x}) for the positive pairs (qs, xs) of the
// batch; pairs beyond len(qs) are padding with empty masks.
func fillRankGrid(n *net, y []int, qs, xs []int) {
	B := len(y)
	q, x1, z, agg, zpos := n.idx("q"), n.in("x1"), n.in("z"), n.in("agg"), n.in("zpos")
	clear(x1)
	clear(z)
	clear(agg)
	clear(zpos)
	for t := range q {
		q[t] = 0
		if t >= len(qs) {
			continue
		}
		qi, xi := qs[t], xs[t]
		q[t] = qi
		x1[t*B+xi] = 1
		if agg != nil {
			agg[qi*len(q)+t] = 1
		}
		for j := 0; j < B; j++ {
			if j != qi && j != xi {
				z[t*B+j] = 1
				if zpos != nil && y[j] == y[qi] {
					zpos[t*B+j] = 1
				}
			}
		}
	}
}

// rankPairs is a ranking-grid net filled for one batch (rankGridNet).
type rankPairs struct {
	n       *net
	qs      []int // the query of each positive pair
	npos    []int // the number of positives of each example of the ranking set
	queries int   // the number of examples with at least one positive
}

// rankGridNet is the common start of Forward for the ranking-grid losses
// (RS@k, Smooth-AP): it checks bt, extends it by SiMix virtual examples if
// simix is set (rankBatch), lists the positive pairs, and returns the
// compiled net for them with q, x1, agg, the masks (fillRankGrid) and the
// SiMix mixing input set. A batch without positive pairs gets zero
// gradients and a zero rankPairs (n == nil): the loss is 0. Errors carry
// the loss name.
func (l *base) rankGridNet(bt Batch, grad []float32, simix bool) (rankPairs, error) {
	if err := checkBatch(bt, grad, 0, simix); err != nil {
		return rankPairs{}, fmt.Errorf("%s: %w", l.name, err)
	}
	y, sm, err := rankBatch(bt, simix)
	if err != nil {
		return rankPairs{}, fmt.Errorf("%s: %w", l.name, err)
	}
	qs, xs, npos := posPairs(y)
	if len(qs) == 0 {
		zeroGrads(grad, nil)
		return rankPairs{}, nil
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D, T: capacityFor(len(qs), bt.B), V: sm.V})
	if err != nil {
		return rankPairs{}, fmt.Errorf("%s: %w", l.name, err)
	}
	fillRankGrid(n, y, qs, xs)
	sm.setMix(n)
	queries := 0
	for _, c := range npos {
		if c > 0 {
			queries++
		}
	}
	return rankPairs{n: n, qs: qs, npos: npos, queries: queries}, nil
}

// Forward implements Loss.
func (l *recallK) Forward(bt Batch, grad []float32) (float64, error) {
	p, err := l.rankGridNet(bt, grad, l.simix)
	if err != nil || p.n == nil {
		return 0, err
	}
	scale := 1 / float64(p.queries*len(l.ks))
	for _, k := range l.ks {
		inv := p.n.in(fmt.Sprintf("inv%d", k))
		for i, c := range p.npos {
			inv[i] = 0
			if c > 0 {
				inv[i] = scale / float64(min(k, c))
			}
		}
	}
	return l.r.run(p.n, bt, grad)
}
