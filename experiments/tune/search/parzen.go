package search

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// parzen is a mixture of Gaussians truncated to [a, b] with equal weights
// for the observations and weight prior for a component centred on the
// range with σ = b − a (Bergstra et al. 2011 §4.1; hyperopt's adaptive
// Parzen estimator).
type parzen struct {
	a, b   float64
	mu     []float64
	sigma  []float64
	weight []float64 // normalised
	mass   []float64 // Φ((b−μ)/σ) − Φ((a−μ)/σ): the component's mass in [a, b]
}

var unitNormal = distuv.Normal{Mu: 0, Sigma: 1}

// newParzen fits the estimator to obs (search coordinates in [a, b]).
// Bandwidth of observation i: the larger of the distances to its sorted
// neighbours (the prior's centre included; the range ends stand in at the
// edges), clipped to [(b−a)/min(100, n+1), b−a].
func newParzen(obs []float64, a, b, prior float64) *parzen {
	width := b - a
	mid := (a + b) / 2
	pts := append([]float64{mid}, obs...) // index 0: the prior
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return pts[order[x]] < pts[order[y]] })
	lo := width / math.Min(100, float64(len(obs)+1))
	p := &parzen{a: a, b: b, mu: pts, sigma: make([]float64, len(pts)), weight: make([]float64, len(pts)), mass: make([]float64, len(pts))}
	for r, i := range order {
		left, right := pts[i]-a, b-pts[i]
		if r > 0 {
			left = pts[i] - pts[order[r-1]]
		}
		if r+1 < len(order) {
			right = pts[order[r+1]] - pts[i]
		}
		p.sigma[i] = math.Min(math.Max(math.Max(left, right), lo), width)
	}
	p.sigma[0] = width
	total := prior + float64(len(obs))
	for i := range pts {
		w := 1.0
		if i == 0 {
			w = prior
		}
		p.weight[i] = w / total
		p.mass[i] = unitNormal.CDF((b-pts[i])/p.sigma[i]) - unitNormal.CDF((a-pts[i])/p.sigma[i])
	}
	return p
}

// logDensity is the log of the truncated mixture's density at x.
func (p *parzen) logDensity(x float64) float64 {
	var d float64
	for i, mu := range p.mu {
		if p.mass[i] <= 0 {
			continue
		}
		z := (x - mu) / p.sigma[i]
		d += p.weight[i] * unitNormal.Prob(z) / (p.sigma[i] * p.mass[i])
	}
	return math.Log(d)
}

// sample draws from the truncated mixture: a component by weight, then its
// truncated normal by inverting the CDF between the range's quantiles.
func (p *parzen) sample(rng *rand.Rand) float64 {
	i := drawIndex(p.weight, rng)
	mu, s := p.mu[i], p.sigma[i]
	lo, hi := unitNormal.CDF((p.a-mu)/s), unitNormal.CDF((p.b-mu)/s)
	u := lo + rng.Float64()*(hi-lo)
	if !(u > 0 && u < 1) { // the range lies far in a tail: its nearer end
		return math.Min(math.Max(mu, p.a), p.b)
	}
	x := mu + s*unitNormal.Quantile(u)
	return math.Min(math.Max(x, p.a), p.b)
}
