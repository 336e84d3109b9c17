package metrics

import (
	"context"
	"errors"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// The k-means seed is faiss's C int: a seed outside 32 bits is refused (the
// pure-Go k-means would otherwise use its low 32 bits only), for every
// convention; the largest 32-bit seed is accepted.
func TestEvaluateKMeansSeedRange(t *testing.T) {
	in := Input{Emb: mat32.Matrix{Rows: 4, Cols: 1, Data: []float32{0, 1, 10, 11}}, Labels: []int32{0, 0, 1, 1}}
	for _, conv := range []Convention{Strict, Roth, PML} {
		for _, seed := range []int64{1 << 31, -(1 << 31) - 1} {
			_, err := Evaluate(context.Background(), in, Options{Metrics: []string{"NMI"}, Convention: conv, Seed: seed})
			if !errors.Is(err, ErrInput) {
				t.Errorf("%s seed %d: %v, want ErrInput", conv, seed, err)
			}
		}
		r, err := Evaluate(context.Background(), in, Options{Metrics: []string{"NMI"}, Convention: conv, Seed: 1<<31 - 1})
		if err != nil || r.Metrics["NMI"] < 0 {
			t.Errorf("%s seed 2^31-1: %v %v", conv, r, err)
		}
	}
}
