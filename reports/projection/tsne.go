package projection

import (
	"context"
	"fmt"
	"math"
	"math/rand"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// Options configure TSNE; zero fields take the defaults of van der Maaten
// & Hinton (2008) as used by the common implementations.
type Options struct {
	Perplexity float64 // 30
	Iters      int     // 1000 gradient steps
	// LearningRate is η, 200.
	LearningRate float64
	// Exaggeration multiplies P during the first ExaggerationIters steps
	// (early exaggeration 12 for 250 steps).
	Exaggeration      float64
	ExaggerationIters int
	// Momentum is 0.5 for the first MomentumSwitch steps, FinalMomentum
	// after (0.5 → 0.8 at step 250).
	Momentum, FinalMomentum float64
	MomentumSwitch          int
	Seed                    int64
	Threads                 int // ≤ 0: all cores
	// Progress, if set, is called after every step with (done, Iters).
	Progress func(done, total int)
}

func (o Options) withDefaults() Options {
	set := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	seti := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.Perplexity, 30)
	seti(&o.Iters, 1000)
	set(&o.LearningRate, 200)
	set(&o.Exaggeration, 12)
	seti(&o.ExaggerationIters, 250)
	set(&o.Momentum, 0.5)
	set(&o.FinalMomentum, 0.8)
	seti(&o.MomentumSwitch, 250)
	o.Threads = parallel.Threads(o.Threads)
	return o
}

// Result is a 2-D map: Y holds N rows (x, y) as Y[2i], Y[2i+1].
type Result struct {
	Y []float64
	// KL is the final cost KL(P ‖ Q) (without exaggeration).
	KL float64
}

// TSNE embeds the rows of x in 2-D by exact t-SNE (van der Maaten & Hinton
// 2008):
//
//   - Input affinities: p_{j|i} ∝ exp(−β_i ‖x_i − x_j‖²), with β_i found by
//     bisection so that the entropy of P_i equals log(Perplexity) (nats),
//     see Affinities; p_ij = (p_{j|i} + p_{i|j}) / 2N.
//   - Output affinities: Student-t, q_ij = (1 + ‖y_i − y_j‖²)⁻¹ / Z.
//   - Gradient: ∂C/∂y_i = 4 Σ_j (p_ij − q_ij)(y_i − y_j)(1 + ‖y_i − y_j‖²)⁻¹.
//   - Steps: y ← y + Δ, Δ ← m·Δ − η·g⊙gain, with the gains of Jacobs (1988)
//     (+0.2 where the gradient's sign differs from Δ's, ×0.8 otherwise,
//     floor 0.01); momentum m 0.5 → 0.8 after MomentumSwitch steps; P
//     multiplied by Exaggeration for the first ExaggerationIters steps; y
//     re-centred after every step.
//   - Start: y_i ~ N(0, 10⁻⁴ I) from Seed.
//
// Cost: O(N²·D) once for the input distances and O(N²) per step, with
// N² float64 for P and for the kernel (32 MB each at N = 2000).
func TSNE(ctx context.Context, x mat32.Matrix, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	n := x.Rows
	switch {
	case len(x.Data) != x.Rows*x.Cols || x.Cols == 0:
		return nil, fmt.Errorf("projection: matrix %d×%d with %d values", x.Rows, x.Cols, len(x.Data))
	case n < 3:
		return nil, fmt.Errorf("projection: t-SNE needs at least 3 points, got %d", n)
	case !(opt.Perplexity > 0) || opt.Perplexity >= float64(n-1):
		return nil, fmt.Errorf("projection: perplexity %g must lie in (0, N−1 = %d)", opt.Perplexity, n-1)
	case opt.Iters < 0 || opt.LearningRate < 0:
		return nil, fmt.Errorf("projection: iterations %d and learning rate %g must be ≥ 0", opt.Iters, opt.LearningRate)
	}
	cond, err := Affinities(x, opt.Perplexity, opt.Threads)
	if err != nil {
		return nil, err
	}
	// Symmetrise: p_ij = (p_{j|i} + p_{i|j}) / 2N, floored to keep log p finite.
	P := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				P[i*n+j] = math.Max((cond[i*n+j]+cond[j*n+i])/(2*float64(n)), 1e-12)
			}
		}
	}
	cond = nil

	rng := rand.New(rand.NewSource(opt.Seed))
	Y := make([]float64, 2*n)
	for i := range Y {
		Y[i] = 1e-2 * rng.NormFloat64()
	}
	dY := make([]float64, 2*n) // Δ of the last step
	gains := make([]float64, 2*n)
	for i := range gains {
		gains[i] = 1
	}
	grad := make([]float64, 2*n)
	num := make([]float64, n*n)
	rowZ := make([]float64, n)
	for it := 0; it < opt.Iters; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		exag := 1.0
		if it < opt.ExaggerationIters {
			exag = opt.Exaggeration
		}
		mom := opt.Momentum
		if it >= opt.MomentumSwitch {
			mom = opt.FinalMomentum
		}
		gradient(P, Y, num, rowZ, grad, n, exag, opt.Threads)
		for k := range Y {
			if (grad[k] > 0) != (dY[k] > 0) {
				gains[k] += 0.2
			} else {
				gains[k] *= 0.8
			}
			gains[k] = math.Max(gains[k], 0.01)
			dY[k] = mom*dY[k] - opt.LearningRate*gains[k]*grad[k]
			Y[k] += dY[k]
		}
		center(Y)
		if opt.Progress != nil {
			opt.Progress(it+1, opt.Iters)
		}
	}
	return &Result{Y: Y, KL: klCost(P, Y, n)}, nil
}

// gradient fills grad with ∂C/∂y for exaggeration exag (the kernel num and
// per-row sums rowZ are scratch). Rows run in parallel; every row's sums
// run over j in order, so the result does not depend on the thread count.
func gradient(P, Y, num, rowZ, grad []float64, n int, exag float64, threads int) {
	parallelRows(n, threads, func(i int) {
		yi0, yi1 := Y[2*i], Y[2*i+1]
		row := num[i*n : (i+1)*n]
		var s float64
		for j := 0; j < n; j++ {
			if j == i {
				row[j] = 0
				continue
			}
			d0, d1 := yi0-Y[2*j], yi1-Y[2*j+1]
			row[j] = 1 / (1 + d0*d0 + d1*d1)
			s += row[j]
		}
		rowZ[i] = s
	})
	var Z float64
	for _, s := range rowZ {
		Z += s
	}
	parallelRows(n, threads, func(i int) {
		yi0, yi1 := Y[2*i], Y[2*i+1]
		row, prow := num[i*n:(i+1)*n], P[i*n:(i+1)*n]
		var g0, g1 float64
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			w := (exag*prow[j] - row[j]/Z) * row[j]
			g0 += w * (yi0 - Y[2*j])
			g1 += w * (yi1 - Y[2*j+1])
		}
		grad[2*i], grad[2*i+1] = 4*g0, 4*g1
	})
}

// klCost is KL(P ‖ Q) = Σ_{i≠j} p_ij log(p_ij / q_ij).
func klCost(P, Y []float64, n int) float64 {
	var Z float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				d0, d1 := Y[2*i]-Y[2*j], Y[2*i+1]-Y[2*j+1]
				Z += 1 / (1 + d0*d0 + d1*d1)
			}
		}
	}
	var kl float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				d0, d1 := Y[2*i]-Y[2*j], Y[2*i+1]-Y[2*j+1]
				q := math.Max(1/(1+d0*d0+d1*d1)/Z, 1e-300)
				kl += P[i*n+j] * math.Log(P[i*n+j]/q)
			}
		}
	}
	return kl
}

func center(Y []float64) {
	n := len(Y) / 2
	var m0, m1 float64
	for i := 0; i < n; i++ {
		m0 += Y[2*i]
		m1 += Y[2*i+1]
	}
	m0, m1 = m0/float64(n), m1/float64(n)
	for i := 0; i < n; i++ {
		Y[2*i] -= m0
		Y[2*i+1] -= m1
	}
}

// parallelRows runs f(i) for i in [0, n) on up to threads goroutines, in
// blocks of 16 rows.
func parallelRows(n, threads int, f func(i int)) {
	if threads <= 1 || n < 64 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	const block = 16
	parallel.For(threads, (n+block-1)/block, func(b int) {
		for i := b * block; i < min((b+1)*block, n); i++ {
			f(i)
		}
	})
}

// Affinities returns the conditional input affinities p_{j|i} (row-major
// N×N, rows sum to 1, p_{i|i} = 0) of van der Maaten & Hinton (2008):
//
//	p_{j|i} = exp(−β_i d_ij²) / Σ_{k≠i} exp(−β_i d_ik²),  d = Euclidean distance,
//
// where β_i = 1/(2σ_i²) is found by bisection (doubling/halving until
// bracketed) so that the Shannon entropy H(P_i) = −Σ_j p_{j|i} ln p_{j|i}
// equals ln(perplexity) within 1e-10 nats (at most 200 steps). The
// exponent is shifted by the smallest d_ij² of the row, which leaves P_i
// unchanged and keeps it finite for distant points.
func Affinities(x mat32.Matrix, perplexity float64, threads int) ([]float64, error) {
	n := x.Rows
	if !(perplexity > 0) || perplexity >= float64(n-1) {
		return nil, fmt.Errorf("projection: perplexity %g must lie in (0, N−1 = %d)", perplexity, n-1)
	}
	threads = parallel.Threads(threads)
	for i, v := range x.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("projection: non-finite value in row %d", i/x.Cols)
		}
	}
	target := math.Log(perplexity)
	P := make([]float64, n*n)
	parallelRows(n, threads, func(i int) {
		row := P[i*n : (i+1)*n]
		xi := x.Row(i)
		dmin := math.Inf(1)
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			var s float64
			for t, v := range x.Row(j) {
				d := float64(xi[t]) - float64(v)
				s += d * d
			}
			row[j] = s // d² for now
			dmin = math.Min(dmin, s)
		}
		d2 := append([]float64(nil), row...)
		entropy := func(beta float64) float64 {
			var sum, wsum float64
			for j := 0; j < n; j++ {
				if j == i {
					row[j] = 0
					continue
				}
				e := math.Exp(-beta * (d2[j] - dmin))
				row[j] = e
				sum += e
				wsum += e * (d2[j] - dmin)
			}
			for j := range row {
				row[j] /= sum
			}
			// H = ln Σ + β·E[d² − dmin] for p ∝ exp(−β(d² − dmin)).
			return math.Log(sum) + beta*wsum/sum
		}
		// Scale-free start, β = 1/mean(d²), saves doubling steps.
		beta, lo, hi := 1.0, 0.0, math.Inf(1)
		var m float64
		for j := 0; j < n; j++ {
			m += d2[j]
		}
		if m > 0 {
			beta = float64(n-1) / m
		}
		for step := 0; step < 200; step++ {
			h := entropy(beta)
			if math.Abs(h-target) < 1e-10 {
				return
			}
			if h > target { // too flat: sharpen
				lo = beta
				if math.IsInf(hi, 1) {
					beta *= 2
				} else {
					beta = (beta + hi) / 2
				}
			} else {
				hi = beta
				beta = (beta + lo) / 2
			}
		}
		entropy(beta)
	})
	return P, nil
}
