package trainers

import (
	"context"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/record"
)

// newEvaluator scores held-out embeddings with metrics.Evaluate under cfg's
// metrics, convention, distance and backend. Every metric asked for is
// kept: an undefined one (NaN, e.g. no query with a positive) is written to
// run.json as null and an infinite one (ρ of a rank-deficient embedding)
// as "+Inf" (record.Metrics), so reports can show both as what they are.
func newEvaluator(cfg Config, searcher knn.Searcher) EvalFunc {
	// The convention was validated with the config; an unknown one fails in
	// metrics.Evaluate below with its own message.
	km, _ := FaissKMeans(cfg.Backend, cfg.Convention, 0)
	mopt := metrics.Options{Metrics: cfg.Metrics, Distance: cfg.Distance, Convention: metrics.Convention(cfg.Convention),
		Searcher: searcher, KMeans: km}
	return func(ctx context.Context, emb knn.Matrix, labels []int32) (record.Metrics, error) {
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

// FaissKMeans is the k-means behind NMI, F1 and AMI for a k-NN backend:
// with faiss or faiss-gpu (and faiss compiled in), faiss's own k-means
// (clustering.FaissKMeans) with the preset of the convention — roth: 20
// iterations, the seed, at least 1 point per centroid, no subsampling (Roth
// et al. 2020's evaluation code); pml: faiss.Kmeans's defaults (at most 256
// points per centroid), both from clustering.KMeansPreset — and otherwise nil, metrics.Evaluate's built-in
// k-means. threads 0 = all cores.
func FaissKMeans(backend, convention string, threads int) (metrics.KMeansFunc, error) {
	if (backend != knn.FaissName && backend != knn.FaissGPUName) || !clustering.FaissCompiled {
		return nil, nil
	}
	preset, err := clustering.KMeansPreset(convention)
	if err != nil {
		return nil, err
	}
	return func(x knn.Matrix, k int, seed int64) ([]int32, error) {
		o := preset
		o.Seed, o.Threads = seed, threads
		r, err := clustering.FaissKMeans(context.Background(), x, k, o)
		if err != nil {
			return nil, err
		}
		return r.Assign, nil
	}, nil
}
