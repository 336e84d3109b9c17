package losses

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// checkBatch validates a batch and the gradient buffer. numClasses > 0 also
// bounds the labels (proxy losses); needRng requires a random source.
func checkBatch(b Batch, grad []float32, numClasses int, needRng bool) error {
	if b.B < 2 || b.D < 1 {
		return fmt.Errorf("batch of B=%d, D=%d: need B ≥ 2 and D ≥ 1", b.B, b.D)
	}
	if len(b.Emb) != b.B*b.D {
		return fmt.Errorf("batch embeddings have %d values, want B·D = %d·%d = %d", len(b.Emb), b.B, b.D, b.B*b.D)
	}
	if len(b.Labels) != b.B {
		return fmt.Errorf("batch has %d labels, want B = %d", len(b.Labels), b.B)
	}
	if len(grad) != b.B*b.D {
		return fmt.Errorf("gradient buffer has %d values, want B·D = %d", len(grad), b.B*b.D)
	}
	for i, v := range b.Emb {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("embedding row %d, column %d is %v", i/b.D, i%b.D, v)
		}
	}
	for i, y := range b.Labels {
		if y < 0 || (numClasses > 0 && y >= numClasses) {
			if numClasses > 0 {
				return fmt.Errorf("label %d of sample %d is outside [0, %d)", y, i, numClasses)
			}
			return fmt.Errorf("label %d of sample %d is negative", y, i)
		}
	}
	if needRng && b.Rng == nil {
		return fmt.Errorf("batch has no random source (Batch.Rng) for stochastic mining")
	}
	return nil
}

// unitRows returns the rows of the B×D float32 matrix e scaled to unit L2
// norm, in float64 (the value side of normalize in nodes.go).
func unitRows(e []float32, B, D int) []float64 {
	return unitRowsTo(make([]float64, B*D), e, B, D)
}

// unitRowsTo is unitRows written into out (len B·D), which it returns.
func unitRowsTo(out []float64, e []float32, B, D int) []float64 {
	for i := 0; i < B; i++ {
		row, s := e[i*D:(i+1)*D], sqrtEps
		for _, v := range row {
			s += float64(v) * float64(v)
		}
		inv := 1 / math.Sqrt(s)
		for j, v := range row {
			out[i*D+j] = float64(v) * inv
		}
	}
	return out
}

// unitRowsBack writes into grad the gradient with respect to the rows e_i
// of e given dU = ∂L/∂φ for φ = unitRows(e): ∂L/∂e_i = (dU_i − φ_i(φ_iᵀdU_i))/r_i,
// r_i = √(‖e_i‖² + ε), the Jacobian (I − φ_iφ_iᵀ)/r_i of normalize.
func unitRowsBack(grad, e []float32, u, dU []float64, B, D int) {
	for i := 0; i < B; i++ {
		r := sqrtEps
		for _, v := range e[i*D : (i+1)*D] {
			r += float64(v) * float64(v)
		}
		inv := 1 / math.Sqrt(r)
		ui, gi := u[i*D:(i+1)*D], dU[i*D:(i+1)*D]
		dot := 0.0
		for j := range gi {
			dot += ui[j] * gi[j]
		}
		for j := range gi {
			grad[i*D+j] = float32((gi[j] - ui[j]*dot) * inv)
		}
	}
}

// gram returns x·yᵀ for row-major x (n×d) and y (m×d).
func gram(x []float64, n int, y []float64, m, d int) []float64 {
	return gramTo(make([]float64, n*m), x, n, y, m, d)
}

// gramTo is gram written into c (len n·m), which it returns.
func gramTo(c, x []float64, n int, y []float64, m, d int) []float64 {
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: n, Cols: d, Stride: d, Data: x},
		blas64.General{Rows: m, Cols: d, Stride: d, Data: y},
		0, blas64.General{Rows: n, Cols: m, Stride: m, Data: c})
	return c
}

// unitGramNet is the start of Forward for the losses that mine their pairs
// in Go on cosine similarities (multi-similarity, ranked list): it checks bt
// and returns the compiled B×D net with the B×B Gram matrix S of the unit
// rows. Errors carry the loss name.
func (l *base) unitGramNet(bt Batch, grad []float32) (*net, []float64, error) {
	if err := checkBatch(bt, grad, 0, false); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", l.name, err)
	}
	n, err := l.r.get(shape{B: bt.B, D: bt.D})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", l.name, err)
	}
	u := unitRows(bt.Emb, bt.B, bt.D)
	return n, gram(u, bt.B, u, bt.B, bt.D), nil
}

// pairDist returns the B×B Euclidean distances between the rows of x (B×D),
// √max(‖x_i‖² + ‖x_j‖² − 2x_i·x_j, 0), with an exact 0 diagonal.
func pairDist(x []float64, B, D int) []float32 {
	g := gram(x, B, x, B, D)
	d := make([]float32, B*B)
	for i := 0; i < B; i++ {
		for j := 0; j < B; j++ {
			if i != j {
				d[i*B+j] = float32(math.Sqrt(max(g[i*B+i]+g[j*B+j]-2*g[i*B+j], 0)))
			}
		}
	}
	return d
}

// hyperFlag reads a 0/1 hyper-parameter.
func hyperFlag(c Config, name string) (bool, error) {
	switch v := c.hyperParam(name); v {
	case 0:
		return false, nil
	case 1:
		return true, nil
	default:
		return false, fmt.Errorf("hyper-parameter %s must be 0 or 1, got %v", name, v)
	}
}

// positive checks that named hyper-parameters are > 0.
func positive(vals map[string]float64) error {
	for k, v := range vals {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("hyper-parameter %s must be > 0, got %v", k, v)
		}
	}
	return nil
}

// noMiner rejects a miner for losses that mine internally or not at all.
func noMiner(name string, c Config) error {
	if c.Miner != "" {
		return fmt.Errorf("loss %s does not use a miner (got %q)", name, c.Miner)
	}
	return nil
}

func sqrtF(x float64) float64 { return math.Sqrt(x) }

// grow returns s resliced to n elements, reallocated when too short; its
// contents are not cleared.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
