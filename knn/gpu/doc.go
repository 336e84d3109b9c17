// Package gpu is the exact k-NN search and the k-means assignment step on
// an NVIDIA GPU, with no cgo and no CUDA toolkit at build time: the driver
// (libcuda.so.1) is loaded at run time and the kernels are PTX generated
// from kernels.cu by clang and embedded (gen.go).
//
// Searcher is the k-NN backend "gpu" and the device half of "auto"
// (Register adds both to a backend table, metrics.Backends; auto is
// knn.Exact when Available says no device is usable). Its distances are those of
// knn.Exact bit for bit: ⟨q, x⟩ is one fused-multiply-add chain over the
// dimension and the norms are float32 sums in order (internal/fma32), so
// the neighbour lists, their order and the tie rule (equal distances →
// lower index) equal `--backend exact`'s. Searcher also implements
// clustering.CentroidAssigner (NearestCentroids), so the k-means behind
// NMI, F1 and AMI runs its assignment step where the search runs and gives
// the CPU's clusters.
//
// Without a device every kernel has a CPU emulation (emulate.go) that the
// tests run; docs/gpu.md has the design, the exactness argument, the
// device-memory bound (plan.go) and the device checks.
package gpu
