package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// nPair is the N-pair loss of Sohn (2016), Roth et al. 2020 §A.1 eq. 4, on raw
// (un-normalised) embeddings φ*: every anchor a with a positive in the batch
// gets one positive p drawn uniformly (Batch.Rng) and all its negatives,
//
//	L = 1/|A| Σ_{a∈A} log(1 + Σ_{n: y_n≠y_a} exp(φ*_aᵀφ*_n − φ*_aᵀφ*_p)) + ν/b Σ_{i∈𝓑} ‖φ*_i‖²
//
// with ν = 0.005 (Sohn's embedding regulariser; eq. 4's 1/b over the pairs
// is the mean over the anchors A). The model must not normalise for this loss.
type nPair struct {
	base
	nu float64
}

func init() {
	Register(Info{
		Name:    "npair",
		Raw:     true,
		Summary: "mean log(1 + Σ_n exp(aᵀn − aᵀp)) + ν/b Σ‖φ‖², ν = 0.005, raw embeddings (Sohn 2016; Roth et al. 2020 eq. 4)",
		Hyper:   map[string]float64{"nu": 0.005},
		New: func(c Config) (Loss, error) {
			l := &nPair{base: base{name: "npair"}, nu: c.Hyper["nu"]}
			if l.nu < 0 {
				return nil, fmt.Errorf("hyper-parameter nu must be ≥ 0, got %v", l.nu)
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *nPair) graph(b *builder) *G.Node {
	S := matmulT(b.E, b.E)
	x := colSub(S, pick(S, b.input("p1", b.B, b.B))) // aᵀn − aᵀp
	terms := b.lse(x, b.input("neg", b.B, b.B), true)
	return add(total(mul(terms, b.input("w", b.B))), mulS(total(sq(b.E)), l.nu/float64(b.B)))
}

// Forward implements Loss.
func (l *nPair) Forward(bt Batch, grad []float32) (float64, error) { return l.nPairForward(bt, grad) }

// nPairForward is Forward for the N-pair-style losses (N-pair, angular),
// whose graphs take the inputs p1, neg and w of drawPositives.
func (l *base) nPairForward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, true); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	drawPositives(bt, n.in("p1"), n.in("neg"), n.in("w"))
	return l.r.run(n, bt, grad)
}

// drawPositives fills, for N-pair-style losses, the one-hot row P1_a of one
// positive drawn uniformly per anchor, the negative mask and w_a = 1/|A| over
// the anchors A with a positive (0 elsewhere); it returns |A|.
func drawPositives(bt Batch, P1, N, w []float64) int {
	B, y := bt.B, bt.Labels
	clear(P1)
	anchors := 0
	var pos []int
	for a := 0; a < B; a++ {
		pos = pos[:0]
		for j := 0; j < B; j++ {
			N[a*B+j] = 0
			if y[j] != y[a] {
				N[a*B+j] = 1
			} else if j != a {
				pos = append(pos, j)
			}
		}
		w[a] = 0
		if len(pos) > 0 {
			P1[a*B+pos[bt.Rng.Intn(len(pos))]] = 1
			w[a], anchors = 1, anchors+1
		}
	}
	for a := range w {
		w[a] /= float64(max(anchors, 1))
	}
	return anchors
}
