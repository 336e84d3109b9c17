package losses

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// snr is the signal-to-noise-ratio triplet loss of Yuan et al. (2019), seed
// 000 §A.1 eq. 15, on unit embeddings φ and mined triplets 𝒯 (default
// distance-weighted, Roth et al.'s "SNR (D)"). The SNR distance of a pair is the
// variance (over the D components) of the noise φ_j − φ_i relative to the
// variance of the anchor signal φ_i,
//
//	d_S(i, j) = var(φ_j − φ_i) / var(φ_i),  var(x) = 1/D Σ_m (x_m − x̄)²,
//
// and
//
//	L = 1/N⁺ Σ_{(a,p,n)∈𝒯} [d_S(a,p) − d_S(a,n) + γ]₊ + λ/b Σ_{i∈𝓑} |Σ_m φ_{i,m}|
//
// with γ = 0.2, λ = 0.005 and N⁺ the number of non-zero hinge terms (Roth
// et al.'s reference code; eq. 15 prints the sums without squares and without
// the mean, a typesetting slip against Yuan et al.). The regulariser pushes
// every embedding towards zero mean. Note: Roth et al.'s code switches λ off
// when the miner is distance-weighted; this loss keeps the text's λ = 0.005
// (set lambda = 0 for the code's behaviour). N⁺ is counted on the float
// values before the graph runs, like mining.
type snr struct {
	tuples
	margin, lambda float64
}

func init() {
	Register(Info{
		Name:    "snr",
		Summary: "Σ[var(p−a)/var(a) − var(n−a)/var(a) + γ]₊ / #non-zero + λ/b Σ|Σ_m φ_m|, γ = 0.2, λ = 0.005 (Yuan 2019; Roth et al. 2020 eq. 15)",
		Hyper:   map[string]float64{"margin": 0.2, "lambda": 0.005},
		Miner:   "distance",
		Sphere:  true,
		New: func(c Config) (Loss, error) {
			l := &snr{margin: c.Hyper["margin"], lambda: c.Hyper["lambda"]}
			if err := positive(map[string]float64{"margin": l.margin}); err != nil {
				return nil, err
			}
			if err := checkFinite(map[string]float64{"lambda": l.lambda}); err != nil {
				return nil, err
			}
			if l.lambda < 0 {
				return nil, fmt.Errorf("hyper-parameter lambda must be ≥ 0, got %v", l.lambda)
			}
			var err error
			l.tuples, err = newTuples("snr", c, "distance", l.margin)
			l.r.graph = l.graph
			return l, err
		},
	})
}

// rowVar is the per-row variance 1/D Σ_m (x_m − x̄)² of a T×D matrix.
func rowVar(x *G.Node) *G.Node {
	D := float64(x.Shape()[1])
	return mulS(rowSum(sq(colSub(x, mulS(rowSum(x), 1/D)))), 1/D)
}

func (l *snr) graph(b *builder) *G.Node {
	u := b.unitE()
	ea := gather(u, b.index("a", b.T))
	va := addS(rowVar(ea), sqrtEps) // padding rows are valid rows too: no 0/0
	dp := div(rowVar(sub(gather(u, b.index("p", b.T)), ea)), va)
	dn := div(rowVar(sub(gather(u, b.index("n", b.T)), ea)), va)
	terms := mul(relu(addS(sub(dp, dn), l.margin)), b.input("w", b.T))
	reg := mulS(total(abs(rowSum(u))), l.lambda/float64(b.B))
	return add(total(terms), reg)
}

// Forward implements Loss.
func (l *snr) Forward(bt Batch, grad []float32) (float64, error) {
	tr, err := mineTriplets(&l.tuples, bt, grad)
	if err != nil {
		return 0, err
	}
	T := max(tr.Len(), 1) // without triplets only the regulariser remains
	n, err := l.r.get(shape{B: bt.B, D: bt.D, T: capacityFor(T, bt.B)})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", l.name, err)
	}
	D := bt.D
	u := unitRows(bt.Emb, bt.B, D)
	variance := func(x func(m int) float64) float64 {
		mean, v := 0.0, 0.0
		for m := 0; m < D; m++ {
			mean += x(m)
		}
		mean /= float64(D)
		for m := 0; m < D; m++ {
			v += (x(m) - mean) * (x(m) - mean)
		}
		return v / float64(D)
	}
	a, p, ng, wt := n.idx("a"), n.idx("p"), n.idx("n"), n.in("w")
	nonzero := 0
	for t := range a {
		a[t], p[t], ng[t], wt[t] = 0, 0, 0, 0
		if t >= tr.Len() {
			continue
		}
		ia, ip, in := int(tr.A[t]), int(tr.P[t]), int(tr.N[t])
		a[t], p[t], ng[t], wt[t] = ia, ip, in, 1
		va := variance(func(m int) float64 { return u[ia*D+m] }) + sqrtEps
		dp := variance(func(m int) float64 { return u[ip*D+m] - u[ia*D+m] }) / va
		dn := variance(func(m int) float64 { return u[in*D+m] - u[ia*D+m] }) / va
		if dp-dn+l.margin > 0 {
			nonzero++
		}
	}
	for t := range wt {
		wt[t] /= float64(max(nonzero, 1))
	}
	return l.r.run(n, bt, grad)
}
