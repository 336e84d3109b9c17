package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// genLifted is the generalised lifted structure loss of Hermans et al.
// (2017), Roth et al. 2020 §A.1 eq. 3, on raw (un-normalised) embeddings φ*: every
// anchor a with at least one positive and one negative in the batch gives
//
//	ℓ_a = [ log Σ_{p: y_p=y_a, p≠a} e^{d(φ*_a, φ*_p)} + log Σ_{n: y_n≠y_a} e^{γ − d(φ*_a, φ*_n)} ]₊
//
// and L = 1/|A| Σ_{a∈A} ℓ_a + ν/b Σ_{i∈𝓑} ‖φ*_i‖², with d the Euclidean
// distance, γ = 1 and ν = 0.005. Eq. 3 sums over anchors; the mean is Roth
// et al.'s reference code. Its code regularises the mean norm ‖φ*‖; eq. 3 (and
// this loss) the squared norm, as N-pair does. The model must not normalise.
type genLifted struct {
	base
	margin, nu float64
}

func init() {
	Register(Info{
		Name:    "genlifted",
		Raw:     true,
		Summary: "mean_a [log Σ_P e^{d(a,p)} + log Σ_N e^{γ−d(a,n)}]₊ + ν/b Σ‖φ‖², γ = 1, ν = 0.005, raw embeddings (Hermans 2017; Roth et al. 2020 eq. 3)",
		Hyper:   map[string]float64{"margin": 1, "nu": 0.005},
		New: func(c Config) (Loss, error) {
			l := &genLifted{base: base{name: "genlifted"}, margin: c.Hyper["margin"], nu: c.Hyper["nu"]}
			if err := checkFinite(map[string]float64{"margin": l.margin, "nu": l.nu}); err != nil {
				return nil, err
			}
			if l.nu < 0 {
				return nil, fmt.Errorf("hyper-parameter nu must be ≥ 0, got %v", l.nu)
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *genLifted) graph(b *builder) *G.Node {
	D := pairDistE(b.E)
	pos := b.lse(D, b.input("pos", b.B, b.B), false)
	negs := b.lse(addS(neg(D), l.margin), b.input("neg", b.B, b.B), false)
	terms := relu(add(pos, negs))
	return add(total(mul(terms, b.input("w", b.B))), mulS(total(sq(b.E)), l.nu/float64(b.B)))
}

// Forward implements Loss.
func (l *genLifted) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	labelMasks(bt.Labels, n.in("pos"), n.in("neg"), n.in("w")) // no anchor: only the regulariser
	return l.r.run(n, bt, grad)
}

// labelMasks fills the B×B positive (same label, j ≠ i) and negative masks
// and w_i = 1/|A| for the anchors A with at least one of each (0 elsewhere);
// it returns |A|. Rows outside A get a 1 on the diagonal of both masks so
// that their masked log-sum-exp stays finite (their weight is 0).
func labelMasks(y []int, pos, negs, w []float64) int {
	B := len(y)
	anchors := 0
	for i := 0; i < B; i++ {
		np, nn := 0, 0
		for j := 0; j < B; j++ {
			pos[i*B+j], negs[i*B+j] = 0, 0
			switch {
			case j == i:
			case y[j] == y[i]:
				pos[i*B+j], np = 1, np+1
			default:
				negs[i*B+j], nn = 1, nn+1
			}
		}
		w[i] = 0
		if np > 0 && nn > 0 {
			w[i], anchors = 1, anchors+1
		} else {
			pos[i*B+i], negs[i*B+i] = 1, 1
		}
	}
	for i := range w {
		w[i] /= float64(max(anchors, 1))
	}
	return anchors
}
