package losses

import (
	"fmt"

	"github.com/dmlbench/dmlbench/trainers/miners"
	G "gorgonia.org/gorgonia"
)

// tuples is the machinery shared by the losses that consume mined triplets
// (contrastive, triplet, margin). Mining runs in Go on the pairwise distances
// of the unit-normalised batch; the mined (a, p, n) become index inputs of a
// fixed capacity T (a multiple of B: one triplet per anchor fits in T = B),
// padded with zero-weight entries, so the graph works on a T×D grid gathered
// by index rather than a B³ cube.
type tuples struct {
	base
	miner      miners.Miner
	numClasses int // > 0: labels must lie in [0, numClasses)
	// switched: the miner may emit ρ-switched tuples (a, a, p′), p′ a
	// positive of a in the negative slot (Roth et al. 2020 §5; see WrapMiner).
	switched bool
}

// MinerWrapper is implemented by the tuple losses (contrastive, triplet,
// margin, SNR, quadruplet): WrapMiner replaces the loss's miner m by wrap(m).
// It is the hook of ρ-regularisation (trainers/regularizers.Rho): after
// WrapMiner the loss also accepts ρ-switched tuples (a, a, p′), whose
// "positive" is the anchor itself (distance 0) and whose "negative" p′ is a
// positive of a, so the negative term pushes p′ away from a. Losses that do
// not mine tuples do not implement it.
type MinerWrapper interface {
	WrapMiner(wrap func(miners.Miner) miners.Miner)
}

// WrapMiner implements MinerWrapper.
func (t *tuples) WrapMiner(wrap func(miners.Miner) miners.Miner) {
	t.miner = wrap(t.miner)
	t.switched = true
}

// newTuples resolves the miner (c.Miner, or def) and hands it the margin.
func newTuples(name string, c Config, def string, margin float64) (tuples, error) {
	mn := c.Miner
	if mn == "" {
		mn = def
	}
	m, err := miners.New(mn)
	if err != nil {
		return tuples{}, fmt.Errorf("loss %s: %w", name, err)
	}
	if ms, ok := m.(miners.MarginSetter); ok {
		ms.SetMargin(margin)
	}
	return tuples{base: base{name: name}, miner: m}, nil
}

// setMiner replaces the miner (tests fix the tuples with it).
func (t *tuples) setMiner(m miners.Miner) { t.miner = m }

// triplets are the gathered per-triplet quantities of a tuple graph.
type triplets struct {
	dap, dan *G.Node // (T) distances d(a,p), d(a,n) between unit-normalised rows
	w        *G.Node // (T) 1/|mined| for mined triplets, 0 for padding
	valid    *G.Node // (T) 1 for mined triplets, 0 for padding
}

// triplets declares the index inputs a, p, n and the weights, and gathers
// the anchor, positive and negative rows of the unit-normalised batch.
func (b *builder) triplets() triplets {
	u := b.unitE()
	ea := gather(u, b.index("a", b.T))
	return triplets{
		dap:   rowDist(ea, gather(u, b.index("p", b.T))),
		dan:   rowDist(ea, gather(u, b.index("n", b.T))),
		w:     b.input("w", b.T),
		valid: b.input("valid", b.T),
	}
}

// forward mines, fills the tuple inputs (and, when the graph declared it, the
// anchor-label index "ya") and runs the graph. A batch without any valid
// triplet gives L = 0 and zero gradients.
func (t *tuples) forward(b Batch, grad []float32) (float64, error) {
	if err := checkBatch(b, grad, t.numClasses, true); err != nil {
		return 0, fmt.Errorf("%s: %w", t.name, err)
	}
	if ds, ok := t.miner.(miners.DimSetter); ok {
		ds.SetDim(b.D)
	}
	dist := pairDist(unitRows(b.Emb, b.B, b.D), b.B, b.D)
	if err := miners.Check(dist, b.Labels, b.Rng); err != nil {
		return 0, fmt.Errorf("%s: %w", t.name, err)
	}
	tr := t.miner.Mine(dist, b.Labels, b.Rng)
	if err := checkTriplets(tr, b.Labels, t.switched); err != nil {
		return 0, fmt.Errorf("%s: miner %s: %w", t.name, t.miner.Name(), err)
	}
	if tr.Len() == 0 {
		zeroGrads(grad, t.r.params)
		return 0, nil
	}
	capacity := b.B
	for capacity < tr.Len() {
		capacity += b.B
	}
	n, err := t.r.get(shape{B: b.B, D: b.D, T: capacity})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", t.name, err)
	}
	a, p, ng, ya := n.idx("a"), n.idx("p"), n.idx("n"), n.idx("ya")
	w, valid := n.in("w"), n.in("valid")
	for i := range a {
		a[i], p[i], ng[i], w[i], valid[i] = 0, 0, 0, 0, 0
		if i < tr.Len() {
			a[i], p[i], ng[i] = int(tr.A[i]), int(tr.P[i]), int(tr.N[i])
			w[i], valid[i] = 1/float64(tr.Len()), 1
		}
		if ya != nil {
			ya[i] = b.Labels[a[i]]
		}
	}
	return t.r.run(n, b, grad)
}

// checkTriplets rejects out-of-range or label-inconsistent tuples; with
// switched, ρ-switched tuples (a, a, p′), y_p′ = y_a, p′ ≠ a, pass too.
func checkTriplets(t miners.Triplets, labels []int, switched bool) error {
	if len(t.P) != len(t.A) || len(t.N) != len(t.A) {
		return fmt.Errorf("ragged triplets (%d, %d, %d)", len(t.A), len(t.P), len(t.N))
	}
	B := int32(len(labels))
	for i := range t.A {
		a, p, n := t.A[i], t.P[i], t.N[i]
		if a < 0 || p < 0 || n < 0 || a >= B || p >= B || n >= B {
			return fmt.Errorf("triplet %d (%d, %d, %d) outside the batch of %d", i, a, p, n, B)
		}
		if switched && a == p && n != a && labels[n] == labels[a] {
			continue
		}
		if a == p || labels[a] != labels[p] || labels[a] == labels[n] {
			return fmt.Errorf("triplet %d (%d, %d, %d) is not (anchor, positive, negative)", i, a, p, n)
		}
	}
	return nil
}
