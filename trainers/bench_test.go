package trainers

import (
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/blas32"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/trainers/model"
)

// forBLAS runs f as one sub-benchmark per GEMM kernel of internal/blas32
// this CPU runs under Gorgonia (avx512, avx2, gonum's Sgemm, portable), so
// that one process gives same-session ratios; with -tags openblas, one
// sub-benchmark "openblas".
func forBLAS(b *testing.B, f func(b *testing.B)) {
	if model.BLASName == "openblas" { // -tags openblas: Gorgonia is on OpenBLAS
		b.Run("openblas", f)
		return
	}
	prev := blas32.Kernel()
	defer blas32.SetKernel(prev)
	for _, name := range blas32.Kernels() {
		b.Run(name, func(b *testing.B) {
			if err := blas32.SetKernel(name); err != nil {
				b.Fatal(err)
			}
			f(b)
		})
	}
}

// benchStep times tr.step over the sampler's batches and checks that every
// loss is finite and non-negative and that the steps moved the weights.
func benchStep(b *testing.B, cfg Config, train Split) {
	rng := rand.New(rand.NewSource(1))
	tr, err := newTrainer(cfg, Options{Train: train, Test: train})
	if err != nil {
		b.Skip("trainer not available:", err)
	}
	defer tr.m.Close()
	batches, err := tr.sampler.Batches(train.Labels, cfg.BatchSize, 16, rng)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.step(batches[0], rng, 1); err != nil { // warm-up: buffers, pools
		b.Fatal(err)
	}
	w := tr.modelPar[0]
	before := append([]float32(nil), w.Data...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := tr.step(batches[i%len(batches)], rng, 1)
		if err != nil {
			b.Fatal(err)
		}
		if !(l >= 0) || math.IsInf(l, 0) {
			b.Fatalf("step %d: loss %v, want finite and ≥ 0", i, l)
		}
	}
	b.StopTimer()
	moved := false
	for i, v := range w.Data {
		moved = moved || v != before[i]
	}
	if !moved {
		b.Fatalf("%d steps left %s unchanged", b.N, w.Name)
	}
}

// BenchmarkTrainStep times one full training step (forward pass keeping the
// activations, MS loss with dL/dE, back-propagation, Adam) of the MLP
// 512→512→128 (LayerNorm, L2-normalised output) on a batch of 112 (SPC-2);
// trainers/testdata/torch_step.py times the same step in PyTorch.
func BenchmarkTrainStep(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n, dim, classes = 1120, 512, 112
	train := Split{X: mat32.Matrix{Rows: n, Cols: dim, Data: make([]float32, n*dim)}, Labels: make([]int32, n)}
	for i := range train.X.Data {
		train.X.Data[i] = float32(rng.NormFloat64())
	}
	for i := range train.Labels {
		train.Labels[i] = int32(i % classes)
	}
	cfg := Config{Loss: "multisimilarity", Sampler: "spc-2", BatchSize: 112, Hidden: []int{512}, EmbedDim: 128, Seed: 1}.WithDefaults()
	forBLAS(b, func(b *testing.B) { benchStep(b, cfg, train) })
}

// BenchmarkTrainStepCNN is BenchmarkTrainStep for the default CNN
// (1×28×28 → conv 32 → conv 64 → 128, L2; Omniglot-sized pixels) at batch
// 112 (SPC-2); trainers/testdata/torch_cnn_step.py times the same step in
// PyTorch.
func BenchmarkTrainStepCNN(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const n, side, classes = 1120, 28, 112
	train := Split{X: mat32.Matrix{Rows: n, Cols: side * side, Data: make([]float32, n*side*side)}, Labels: make([]int32, n)}
	for i := range train.X.Data {
		train.X.Data[i] = float32(math.Abs(rng.NormFloat64())) / 3 // pixel-like, ≥ 0
	}
	for i := range train.Labels {
		train.Labels[i] = int32(i % classes)
	}
	cfg := Config{Arch: "cnn", Loss: "multisimilarity", Sampler: "spc-2", BatchSize: 112, EmbedDim: 128, Seed: 1,
		InChannels: 1, InHeight: side, InWidth: side}.WithDefaults()
	forBLAS(b, func(b *testing.B) { benchStep(b, cfg, train) })
}
