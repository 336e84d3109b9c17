// Package testutil holds the synthetic data and the evaluator shared by the
// training tests of trainers, trainers/regularizers and trainers/samplers.
// It imports neither trainers nor its sub-packages, so that trainers'
// in-package tests can use it too.
package testutil

import (
	"context"
	"math/rand"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/knn"
)

// Synth makes classes·per rows of dim inputs whose class identity lives in
// the first signal dimensions (a class centre from N(0, 1) plus 0.15·N(0, 1)
// per row) while the other dimensions carry larger class-independent noise
// (1.5·N(0, 1)): a model must learn to ignore the noise, and that transfers
// to unseen classes that share the structure. Rows come class by class, per
// rows each, labelled first, first+1, …; every draw is from rng, in row
// order, so a seed fixes the data.
func Synth(rng *rand.Rand, classes, per, dim, signal int, first int32) (mat32.Matrix, []int32) {
	x := mat32.Matrix{Rows: classes * per, Cols: dim, Data: make([]float32, classes*per*dim)}
	var labels []int32
	for c := 0; c < classes; c++ {
		centre := make([]float64, signal)
		for t := range centre {
			centre[t] = rng.NormFloat64()
		}
		for j := 0; j < per; j++ {
			row := x.Row(c*per + j)
			for t := range row {
				if t < signal {
					row[t] = float32(centre[t] + 0.15*rng.NormFloat64())
				} else {
					row[t] = float32(1.5 * rng.NormFloat64())
				}
			}
			labels = append(labels, first+int32(c))
		}
	}
	return x, labels
}

// R1 is an independent Recall@1 evaluator (a trainers.EvalFunc):
// leave-one-out, exact L2 search with knn.BruteForce.
func R1(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error) {
	nb, err := knn.BruteForce{}.Search(ctx, emb, emb, 1, knn.Options{Metric: knn.L2, Exclude: knn.ExcludeSelf})
	if err != nil {
		return nil, err
	}
	hit := 0
	for i := 0; i < emb.Rows; i++ {
		if labels[nb.IDs[i]] == labels[i] {
			hit++
		}
	}
	return record.Metrics{"R@1": float64(hit) / float64(emb.Rows)}, nil
}
