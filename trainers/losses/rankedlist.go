package losses

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// rankedList is the ranked list loss of Wang et al. (2019), Fehérvári et al. 2019 §2.6
// eqs. 6–9, on unit embeddings (Fehérvári et al. 2019 Tab. 1) with Euclidean distance
// d_ij. For a query i, the non-trivial positives 𝒫*_i = {j: y_j = y_i, j ≠ i,
// d_ij > α − m} are pulled inside a hypersphere of diameter α − m and the
// non-trivial negatives 𝒩*_i = {j: y_j ≠ y_i, d_ij < α} pushed beyond α:
//
//	L_P(i) = 1/|𝒫*_i| Σ_{j∈𝒫*_i} [d_ij − (α − m)]₊                        (eq. 6)
//	L_N(i) = Σ_{j∈𝒩*_i} w_ij/Σ_{k∈𝒩*_i} w_ik · [α − d_ij]₊,  w_ij = e^{T(α − d_ij)}   (eq. 7)
//	L      = 1/|A| Σ_{i∈A} ( L_P(i) + λ L_N(i) )                           (eq. 8)
//
// with A the queries with a non-zero loss (some non-trivial pair), α = 1.2,
// m = 0.4, T = 10, λ = 1 (Wang et al.'s setting). The weights are part of the
// graph (their gradient flows), as in Fehérvári et al. 2019's released MXNet code; the sets
// 𝒫*, 𝒩* are mined on the float values.
type rankedList struct {
	base
	alpha, margin, temp, lambda float64
}

func init() {
	Register(Info{
		Name:    "rankedlist",
		Summary: "mean over queries of mean_{P*}[d−(α−m)]₊ + λ Σ_{N*} softmax(T(α−d))·[α−d]₊, α = 1.2, m = 0.4, T = 10, λ = 1 (Wang 2019; Fehérvári et al. 2019 eqs. 6–9)",
		Hyper:   map[string]float64{"alpha": 1.2, "margin": 0.4, "temperature": 10, "lambda": 1},
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &rankedList{base: base{name: "rankedlist"}, alpha: c.Hyper["alpha"], margin: c.Hyper["margin"],
				temp: c.Hyper["temperature"], lambda: c.Hyper["lambda"]}
			if err := positive(map[string]float64{"alpha": l.alpha, "margin": l.margin}); err != nil {
				return nil, err
			}
			if err := checkFinite(map[string]float64{"temperature": l.temp, "lambda": l.lambda}); err != nil {
				return nil, err
			}
			if l.margin > l.alpha || l.temp < 0 || l.lambda < 0 {
				return nil, fmt.Errorf("ranked list needs 0 < margin ≤ alpha, temperature ≥ 0, lambda ≥ 0 (got %v, %v, %v, %v)", l.margin, l.alpha, l.temp, l.lambda)
			}
			l.r.graph = l.graph
			return l, noMiner(l.name, c)
		},
	})
}

func (l *rankedList) graph(b *builder) *G.Node {
	u := b.unitE()
	D := unitDist(matmulT(u, u))
	Pm, Nm := b.input("pos", b.B, b.B), b.input("neg", b.B, b.B)
	lp := mul(rowSum(mul(relu(addS(D, l.margin-l.alpha)), Pm)), b.input("pw", b.B))
	x := mul(mulS(addS(neg(D), l.alpha), l.temp), Nm)   // T(α − d) on 𝒩*, 0 elsewhere
	e := mul(exp(colSub(x, b.input("shift", b.B))), Nm) // w_ij·e^{−c_i}
	den := add(rowSum(e), b.input("empty", b.B))        // 1 for rows without 𝒩*
	ln := div(rowSum(mul(e, relu(addS(neg(D), l.alpha)))), den)
	return total(mul(add(lp, mulS(ln, l.lambda)), b.input("w", b.B)))
}

// Forward implements Loss.
func (l *rankedList) Forward(bt Batch, grad []float32) (float64, error) {
	n, S, err := l.unitGramNet(bt, grad)
	if err != nil {
		return 0, err
	}
	B, y := bt.B, bt.Labels
	Pm, Nm, pw, shift, empty, w := n.in("pos"), n.in("neg"), n.in("pw"), n.in("shift"), n.in("empty"), n.in("w")
	anchors := 0
	for i := 0; i < B; i++ {
		np, nn, c := 0, 0, math.Inf(-1)
		for j := 0; j < B; j++ {
			Pm[i*B+j], Nm[i*B+j] = 0, 0
			if j == i {
				continue
			}
			d := math.Sqrt(max(2-2*S[i*B+j], 0) + sqrtEps)
			switch {
			case y[j] == y[i] && d > l.alpha-l.margin:
				Pm[i*B+j], np = 1, np+1
			case y[j] != y[i] && d < l.alpha:
				Nm[i*B+j], nn = 1, nn+1
				c = max(c, l.temp*(l.alpha-d))
			}
		}
		pw[i], shift[i], empty[i], w[i] = 1/float64(max(np, 1)), 0, 0, 0
		if nn > 0 {
			shift[i] = c // any constant is exact; the row maximum keeps exp in range
		} else {
			empty[i] = 1
		}
		if np > 0 || nn > 0 {
			w[i], anchors = 1, anchors+1
		}
	}
	return l.r.runAnchorMean(n, bt, grad, w, anchors)
}
