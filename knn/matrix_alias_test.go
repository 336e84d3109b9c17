package knn_test

import (
	"testing"

	"github.com/dmlbench/dmlbench/knn"
)

// A caller outside the module builds its matrices through the alias.
func TestMatrixAlias(t *testing.T) {
	m := knn.Matrix{Rows: 2, Cols: 2, Data: []float32{1, 2, 3, 4}}
	if got := m.Row(1); got[0] != 3 || got[1] != 4 {
		t.Fatalf("Row(1) = %v, want [3 4]", got)
	}
}
