//go:build !(faiss && cuda)

package knn

// FaissGPUCompiled reports whether the "faiss-gpu" backend (FaissGPU, build
// tags faiss and cuda; see docs/faiss-gpu.md) is compiled into this binary.
const FaissGPUCompiled = false
