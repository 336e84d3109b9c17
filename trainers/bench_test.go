package trainers

import (
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/knn"
)

// BenchmarkTrainStep times one full training step (forward-only pass, MS
// loss with dL/dE, surrogate back-propagation, Adam) of the MLP
// 512→512→128 (LayerNorm, L2-normalised output) on a batch of 112 (SPC-2);
// trainers/testdata/torch_step.py times the same step in PyTorch.
func BenchmarkTrainStep(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n, dim, classes = 1120, 512, 112
	train := Split{X: knn.Matrix{Rows: n, Cols: dim, Data: make([]float32, n*dim)}, Labels: make([]int32, n)}
	for i := range train.X.Data {
		train.X.Data[i] = float32(rng.NormFloat64())
	}
	for i := range train.Labels {
		train.Labels[i] = int32(i % classes)
	}
	cfg := Config{Loss: "multisimilarity", Sampler: "spc-2", BatchSize: 112, Hidden: []int{512}, EmbedDim: 128, Seed: 1}.WithDefaults()
	tr, err := newTrainer(cfg, Options{Train: train, Test: train})
	if err != nil {
		b.Skip("multisimilarity loss not available:", err)
	}
	defer tr.m.Close()
	batches, err := tr.sampler.Batches(train.Labels, cfg.BatchSize, 16, rng)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.step(batches[i%len(batches)], rng, 1); err != nil {
			b.Fatal(err)
		}
	}
}
