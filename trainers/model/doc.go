// Package model holds the embedding networks trained by dmlbench run, built on
// Gorgonia (gorgonia.org/gorgonia v0.9.18).
//
// A Model maps input rows x (features or flattened pixels) to embeddings
// E = f(x) (row-major float32). Architectures: "mlp" (mlp.go, any input)
// and "cnn" (cnn.go, images whose C×H×W shape is in Config); both embed the
// compiled two-pass machinery of pass.go. Training is split in two passes so that the
// loss can live outside the autodiff graph (trainers/losses sees only floats):
//
//  1. Forward: E = f(X) with a forward-only program (no gradient bookkeeping).
//  2. The loss returns L and G = dL/dE.
//  3. Backward: a second program re-forwards X and back-propagates the
//     surrogate S = Σᵢⱼ Eᵢⱼ·Gᵢⱼ, where G is an input tensor holding dL/dE.
//     Since G is constant, ∂S/∂θ = Σᵢⱼ Gᵢⱼ ∂Eᵢⱼ/∂θ = dL/dθ by the chain rule.
//
// Because S is a sum over rows, the backward pass may run over any partition
// of the batch into chunks and accumulate: this is multistage
// back-propagation (Patel et al. 2024, Alg. 1, after Revaud et al.), which lets a
// batch larger than the compiled chunk be trained exactly.
//
// Gorgonia graphs have static shapes, so each model compiles its programs for
// a fixed chunk of rows; shorter inputs are zero-padded (padding rows get
// G = 0 and so contribute nothing to the gradient; LayerNorm is per-row so
// padding does not leak into real rows). BatchNorm is not offered for this
// reason: its statistics would couple rows across chunks and padding.
//
// Parameters are exposed as []*losses.Param whose Data slices back the
// Gorgonia tensors directly, so the trainer's optimiser updates them in
// place and the next run of either program sees the new values.
//
// Matrix products run on the project's own float32 GEMM (internal/blas32:
// packed, AVX-512 or AVX2+FMA assembly kernels chosen at run time, no cgo),
// registered with Gorgonia in every build; `-tags openblas` (cgo, Debian
// libopenblas-dev) is an optional alternative that routes Sgemm/Dgemm to
// OpenBLAS (BLASName reports which). The CNN's convolution, bias, pooling
// and ReLU, and the MLP's bias and ReLU, are the package's own ops on
// preallocated memory (cnn_ops.go, ops.go), and the compiled programs keep
// their tensors between runs (rewind.go). Cost of one step: two forward
// passes and one backward pass (PyTorch-style autograd would forward once).
package model
