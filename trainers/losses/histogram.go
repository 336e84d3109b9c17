package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// histogram is the histogram loss of Ustinova & Lempitsky (2016), Roth et al. 2020
// §A.1 eqs. 7–9. The cosine similarities s = φ_iᵀφ_j of unit embeddings over
// all unordered pairs i < j of the batch form the positive set S⁺ (y_i = y_j)
// and the negative set S⁻. With R nodes t_r = −1 + (r−1)Δ, Δ = 2/(R−1), each
// similarity is soft-assigned to its two neighbouring nodes,
//
//	δ(s, r) = [1 − |s − t_r|/Δ]₊                                     (eq. 7)
//
// (the two linear pieces of eq. 7 in one expression), the histograms are
//
//	h^±(r) = 1/|S^±| Σ_{s∈S^±} δ(s, r)                               (eq. 8)
//
// and the loss is the estimated probability that a negative pair is more
// similar than a positive one,
//
//	L = Σ_r h⁻(r) Σ_{q≤r} h⁺(q)                                       (eq. 9).
//
// R = 65 bins (Roth et al. 2020 for CUB200/CARS196; it uses 11 for SOP). A batch
// without positive or negative pairs gives L = 0.
type histogram struct {
	base
	bins int
}

func init() {
	Register(Info{
		Name:    "histogram",
		Summary: "Σ_r h⁻(r)·CDF⁺(r) of soft (linear) histograms of positive/negative cosines, R = 65 bins (11 for SOP) (Ustinova 2016; Roth et al. 2020 eqs. 7–9)",
		Hyper:   map[string]float64{"bins": 65},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &histogram{base: base{name: "histogram"}}
			var err error
			if l.bins, err = intHyper(c, "bins", 2); err != nil {
				return nil, err
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *histogram) graph(b *builder) *G.Node {
	B, R := b.B, l.bins
	P := B * (B - 1) / 2
	u := b.unitE()
	S := must(G.Reshape(matmulT(u, u), tensor.Shape{B * B, 1}))
	idx := b.index("pairs", P) // i·B + j for i < j, fixed for the shape
	k := 0
	for i := 0; i < B; i++ {
		for j := i + 1; j < B; j++ {
			b.n.ints["pairs"][k] = i*B + j
			k++
		}
	}
	s := must(G.Reshape(gather(S, idx), tensor.Shape{P})) // (P)
	delta := 2 / float64(R-1)
	nodes := make([]float64, R)
	for r := range nodes {
		nodes[r] = -1 + float64(r)*delta
	}
	tNode := b.constant(nodes, R)
	// K_rp = δ(s_p, r): R×P.
	K := relu(addS(mulS(abs(colSub(b.rowsOf(s, R), tNode)), -1/delta), 1))
	hPos := mv(K, b.input("wpos", P)) // 1/|S⁺| on positive pairs
	hNeg := mv(K, b.input("wneg", P))
	tri := make([]float64, R*R) // lower triangle: (Tri·h)_r = Σ_{q≤r} h_q
	for r := 0; r < R; r++ {
		for q := 0; q <= r; q++ {
			tri[r*R+q] = 1
		}
	}
	cdf := mv(b.constant(tri, R, R), hPos)
	return total(mul(hNeg, cdf))
}

// Forward implements Loss.
func (l *histogram) Forward(bt Batch, grad []float32) (float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	wp, wn := n.in("wpos"), n.in("wneg")
	np, nn, k := 0, 0, 0
	for i := 0; i < bt.B; i++ {
		for j := i + 1; j < bt.B; j++ {
			wp[k], wn[k] = 0, 0
			if bt.Labels[i] == bt.Labels[j] {
				wp[k], np = 1, np+1
			} else {
				wn[k], nn = 1, nn+1
			}
			k++
		}
	}
	if np == 0 || nn == 0 {
		zeroGrads(grad, nil)
		return 0, nil
	}
	for k := range wp {
		wp[k] /= float64(np)
		wn[k] /= float64(nn)
	}
	return l.r.run(n, bt, grad)
}
