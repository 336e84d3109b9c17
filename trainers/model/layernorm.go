package model

import (
	"math"

	"github.com/dmlbench/dmlbench/trainers/param"
)

// layerNorm is LayerNorm (Ba et al. 2016) over the rows of z (rows×n) with
// per-column γ and β (1×n):
//
//	μ = mean_j z_j,  σ² = mean_j (z_j − μ)²,  s = √(σ² + ε),
//	x̂_j = (z_j − μ)/s,  y_j = x̂_j·γ_j + β_j,
//
// in one pass per row. Row sums are accumulated in float64 and rounded
// once. Gradients, with g = dy·γ per row: dz = (g − mean(g) −
// x̂·mean(g·x̂)) / s, dγ = Σ_rows dy·x̂, dβ = Σ_rows dy (ascending rows).
type layerNorm struct {
	gamma, beta *param.Param
	cols        int
	eps         float32
	mu, s       []float32 // row statistics of the latest forward
	dg, db      []float32 // the γ and β gradients of one pass
}

func newLayerNorm(gamma, beta *param.Param, eps float32, chunk int) *layerNorm {
	n := gamma.Shape[1]
	return &layerNorm{gamma: gamma, beta: beta, cols: n, eps: eps,
		mu: make([]float32, chunk), s: make([]float32, chunk), dg: make([]float32, n), db: make([]float32, n)}
}

// stats returns μ and s of row z.
func (l *layerNorm) stats(z []float32) (mu, s float32) {
	var sum float64
	for _, v := range z {
		sum += float64(v)
	}
	mu = float32(sum / float64(len(z)))
	var sq float64
	for _, v := range z {
		d := float64(v - mu)
		sq += d * d
	}
	return mu, float32(math.Sqrt(float64(float32(sq/float64(len(z))) + l.eps)))
}

func (l *layerNorm) forward(z []float32, rows int, y []float32) {
	gamma, beta := l.gamma.Data[:l.cols], l.beta.Data[:l.cols]
	for r := 0; r < rows; r++ {
		zi, yi := z[r*l.cols:(r+1)*l.cols], y[r*l.cols:(r+1)*l.cols]
		mu, s := l.stats(zi)
		l.mu[r], l.s[r] = mu, s
		for j, v := range zi {
			yi[j] = (v-mu)/s*gamma[j] + beta[j]
		}
	}
}

func (l *layerNorm) backward(z, y, dy []float32, rows int, dz []float32) {
	gamma := l.gamma.Data[:l.cols]
	inv := 1 / float64(l.cols)
	clear(l.dg)
	for r := 0; r < rows; r++ {
		zi, dyi := z[r*l.cols:(r+1)*l.cols], dy[r*l.cols:(r+1)*l.cols]
		mu, s := l.mu[r], l.s[r]
		for j, v := range zi {
			l.dg[j] += dyi[j] * ((v - mu) / s)
		}
		if dz == nil {
			continue
		}
		var sg, sgx float64
		for j, v := range zi {
			g := float64(dyi[j]) * float64(gamma[j])
			sg += g
			sgx += g * float64((v-mu)/s)
		}
		mg, mgx := sg*inv, sgx*inv
		dzi := dz[r*l.cols : (r+1)*l.cols]
		for j, v := range zi {
			g := float64(dyi[j]) * float64(gamma[j])
			dzi[j] = float32((g - mg - float64((v-mu)/s)*mgx) / float64(s))
		}
	}
	addTo(l.gamma.Grad, l.dg)
	addColSums(l.db, l.beta.Grad, dy, rows, l.cols)
}
