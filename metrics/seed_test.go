package metrics

import (
	"context"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Seed 0 means the default k-means seed 1234 unless ExactSeed says it was
// given (eval --seed 0), in which case the clustering gets 0.
func TestExactSeedZero(t *testing.T) {
	emb := mat32.Matrix{Rows: 6, Cols: 1, Data: []float32{0, 0.1, 0.2, 5, 5.1, 5.2}}
	labels := []int32{0, 0, 0, 1, 1, 1}
	for _, c := range []struct {
		exact bool
		want  int64
	}{{false, 1234}, {true, 0}} {
		got := int64(-1)
		km := func(x mat32.Matrix, k int, seed int64) ([]int32, error) {
			got = seed
			return labels, nil
		}
		if _, err := Evaluate(context.Background(), Input{Emb: emb, Labels: labels}, Options{Metrics: []string{"NMI"}, Clustering: km, ExactSeed: c.exact}); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("ExactSeed %v: k-means seed %d, want %d", c.exact, got, c.want)
		}
	}
}
