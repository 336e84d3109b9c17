package trainers

import (
	"context"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/metrics"
)

// newEvaluator scores held-out embeddings with metrics.Evaluate under cfg's
// metrics, convention, distance and backend. Every metric asked for is
// kept: an undefined one (NaN, e.g. no query with a positive) is written to
// run.json as null and an infinite one (ρ of a rank-deficient embedding)
// as "+Inf" (record.Metrics), so reports can show both as what they are.
func newEvaluator(cfg Config, backend metrics.Backend) EvalFunc {
	mopt := metrics.Options{Float32Warn: true, Metrics: cfg.Metrics, Distance: cfg.Distance, Convention: metrics.Convention(cfg.Convention),
		Backend: backend}
	return func(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error) {
		r, err := metrics.Evaluate(ctx, metrics.Input{Emb: emb, Labels: labels}, mopt)
		if err != nil {
			return nil, err
		}
		m := record.Metrics{}
		for k, v := range r.Metrics {
			m[k] = v
		}
		return m, nil
	}
}
