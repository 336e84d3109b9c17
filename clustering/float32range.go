package clustering

import (
	"errors"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// ErrFloat32Range is wrapped by Float32Range.Check's errors: float32
// squared distances of the rows overflow, underflow or cancel.
var ErrFloat32Range = errors.New("float32 distances are meaningless for these embeddings")

// Float32Range summarises what decides whether squared distances computed
// in float32 as ‖x‖² + ‖c‖² − 2⟨x, c⟩ (the expansion of faiss's
// IndexFlatL2, of its k-means, of pytorch-metric-learning and of this
// package's and knn's kernels) carry information about a set of rows. All
// sums are float64.
type Float32Range struct {
	Rows, Dim int
	// MaxSqNorm is R² = max_i ‖x_i‖².
	MaxSqNorm float64
	// Spread is s² = (1/n)·Σ_i ‖x_i − m‖², m the mean row: half the mean
	// squared distance between two rows.
	Spread float64
}

// Thresholds of Float32Range.Check.
const (
	// f32Overflow: ‖x‖² + ‖c‖² + 2|⟨x, c⟩| ≤ 4R² must stay below
	// float32's largest value ≈ 2¹²⁸.
	f32Overflow = 0x1p126
	// f32Underflow: below a spread of 2⁻¹⁰⁰ per dimension the squared
	// differences fall into float32's subnormal range (normal from
	// 2⁻¹²⁶) with fewer than 24 significant bits, or flush to zero.
	f32Underflow = 0x1p-100
	// f32Cancel: each term of the expansion is up to ≈ R² and rounds with
	// a relative error of u = 2⁻²⁴, so a squared distance of the order of
	// s² keeps about 24 − log₂(R²/s²) significant bits; from R²/s² = 2¹⁴
	// on fewer than 10 are left (TestFloat32CancelThreshold shows what
	// this does to nearest-centroid assignments on either side).
	f32Cancel = 0x1p14
)

// MeasureFloat32 returns the Float32Range of the rows of all sets together
// (a query set and its gallery: the distances run between them). The sets
// must share their column count. Cost: two passes over the data.
func MeasureFloat32(sets ...mat32.Matrix) Float32Range {
	var r Float32Range
	var mean []float64
	for _, x := range sets {
		if mean == nil {
			r.Dim = x.Cols
			mean = make([]float64, x.Cols)
		}
		for i := 0; i < x.Rows; i++ {
			var s float64
			for t, v := range x.Row(i) {
				s += float64(v) * float64(v)
				mean[t] += float64(v)
			}
			r.MaxSqNorm = max(r.MaxSqNorm, s)
		}
		r.Rows += x.Rows
	}
	if r.Rows == 0 {
		return r
	}
	for t := range mean {
		mean[t] /= float64(r.Rows)
	}
	for _, x := range sets {
		for i := 0; i < x.Rows; i++ {
			for t, v := range x.Row(i) {
				e := float64(v) - mean[t]
				r.Spread += e * e
			}
		}
	}
	r.Spread /= float64(r.Rows)
	return r
}

// CheckOverflow returns Check's overflow error, or nil: the one failure
// that a float64 recheck of near-ties cannot repair (float32 distances
// become +Inf or NaN and order nothing).
func (r Float32Range) CheckOverflow() error {
	if r.MaxSqNorm > f32Overflow {
		return r.Check()
	}
	return nil
}

// Check returns nil when float32 squared distances of the rows are
// meaningful, else an error wrapping ErrFloat32Range that names the
// problem and its remedy:
//
//   - overflow: R² > 2¹²⁶ (distances become +Inf or NaN);
//   - underflow: 0 < s²/D < 2⁻¹⁰⁰ (distances lose their bits or become 0);
//   - cancellation: s² > 0 and R²/s² ≥ 2¹⁴ (rows far from the origin
//     relative to their spread: distances keep fewer than 10 significant
//     bits, neighbours and k-means assignments are decided by rounding).
//
// Rows that are all equal (s² = 0) pass: their distances are exactly 0.
// Centring the rows (subtracting their mean) changes no distance and
// removes the cancellation; rescaling removes overflow and underflow.
func (r Float32Range) Check() error {
	switch {
	case r.MaxSqNorm > f32Overflow:
		return fmt.Errorf("%w: float32 overflow: the largest squared row norm is %.3g, so squared distances exceed float32's range (3.4e38); rescale the embeddings", ErrFloat32Range, r.MaxSqNorm)
	case r.Spread > 0 && r.Dim > 0 && r.Spread/float64(r.Dim) < f32Underflow:
		return fmt.Errorf("%w: float32 underflow: the rows spread by %.3g per dimension (mean squared distance to their mean / D), below float32's precise range; rescale the embeddings", ErrFloat32Range, r.Spread/float64(r.Dim))
	case r.Spread > 0 && r.MaxSqNorm/r.Spread >= f32Cancel:
		return fmt.Errorf("%w: float32 cancellation: the rows lie far from the origin relative to their spread (largest ‖x‖² = %.3g, mean ‖x − mean‖² = %.3g, ratio %.3g ≥ 2^14), so squared distances ‖x‖² + ‖c‖² − 2⟨x, c⟩ keep fewer than 10 significant bits and neighbours and k-means clusters are decided by rounding; centre the embeddings (subtract their mean: no distance changes)", ErrFloat32Range, r.MaxSqNorm, r.Spread, r.MaxSqNorm/r.Spread)
	}
	if math.IsNaN(r.MaxSqNorm) || math.IsNaN(r.Spread) {
		return fmt.Errorf("%w: non-finite values", ErrFloat32Range)
	}
	return nil
}
