// Package model holds the embedding networks trained by dmlbench run.
//
// A Model maps input rows x (features or flattened pixels) to embeddings
// E = f(x) (row-major float32). Architectures: "mlp" (mlp.go, any input)
// and "cnn" (cnn.go, images whose C×H×W shape is in Config); both are a
// sequence of layers run by net.go, each layer a forward function that keeps
// what its gradient needs and a backward function (ops.go, layernorm.go,
// cnn_ops.go with cnn_pool.go and cnn_im2col.go). Training is split in two
// so that the loss lives outside the network (trainers/losses sees only
// floats):
//
//  1. Forward: E = f(X), keeping every layer's activations.
//  2. The loss returns L and G = dL/dE.
//  3. Backward: back-propagate the surrogate S = Σᵢⱼ Eᵢⱼ·Gᵢⱼ. Since G is
//     constant, ∂S/∂θ = Σᵢⱼ Gᵢⱼ ∂Eᵢⱼ/∂θ = dL/dθ by the chain rule.
//
// Because S is a sum over rows, step 3 may run over any partition of the
// batch into chunks and accumulate: this is multistage back-propagation
// (Patel et al. 2024, Alg. 1, after Revaud et al.), which trains a batch
// larger than the chunk exactly, re-forwarding each chunk (Backward) since
// only one chunk's activations are kept. A batch that fits one chunk is
// forwarded once per step (BackwardKept), as an autograd framework does.
//
// Buffers are allocated once for Chunk rows; a pass of fewer rows uses
// their first rows. Every layer is per-row except the parameter gradients,
// which sum over rows, so rows never mix. BatchNorm is not offered for this
// reason: its statistics would couple rows across chunks.
//
// Parameters are exposed as []*param.Param whose Data slices the layers
// read directly, so the trainer's optimiser updates them in place.
//
// Matrix products run on the project's own float32 GEMM (internal/blas32:
// packed, AVX-512 or AVX2+FMA assembly kernels chosen at run time, no cgo)
// in every build; `-tags openblas` (cgo, Debian libopenblas-dev) is an
// optional alternative that routes the stored-matrix products (the MLP's
// and the output layer's) to OpenBLAS (BLASName reports which); the CNN's
// convolutions pack their im2col operands inside internal/blas32 in every
// build. UseBLAS hands the same BLAS to the losses' Gorgonia graphs.
package model
