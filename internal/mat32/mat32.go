// Package mat32 holds the dense float32 matrix that data sets, models,
// k-NN backends, spectra and projections pass between each other.
//
// It is a plain value (row count, column count, row-major data) so that
// every package can share one layout without copying and without importing
// a computation package to name it.
package mat32

// Matrix is a dense row-major float32 matrix: element (i, j) is
// Data[i*Cols+j].
type Matrix struct {
	Rows, Cols int
	Data       []float32 // len Rows*Cols
}

// Row returns row i; it aliases the matrix data.
func (m Matrix) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }
