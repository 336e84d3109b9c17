// Package knn finds exact k nearest neighbours of query rows among database
// rows. It is the single distance computation behind every retrieval metric
// in dmlbench: metrics.Evaluate runs one Search at the largest depth any
// requested metric needs and all metrics read the same Neighbors.
//
// Backends (Backends, by name; `dmlbench list backends`):
//
//   - "exact" (Exact): the default, pure Go, described below.
//   - "gpu" and "auto" (package knn/gpu, registered when a binary imports
//     it): the same search on an NVIDIA GPU through CUDA, with neighbours
//     bit-identical to Exact's; auto picks the GPU when one is usable and
//     Exact otherwise (docs/gpu.md).
//   - "faiss" (Faiss, build tag faiss) and "faiss-gpu" (FaissGPU, build
//     tags faiss,cuda): faiss's IndexFlat through its C API (knn/faissc),
//     for comparison with faiss itself.
//
// Contract shared by every Searcher:
//
//   - Rows are float32, row-major (mat32.Matrix).
//   - Metric L2 returns squared Euclidean distances, ascending.
//     Metric IP returns inner products, descending (larger = closer).
//   - Ties (equal distance values) are ordered by lower database index, so
//     results are deterministic whatever the thread count.
//   - ExcludeSelf removes database row i from query row i's list (by index,
//     not by position: with duplicate rows the duplicate is kept). It needs
//     q and db to be the same set of rows.
//   - When fewer than k candidates exist the remaining slots hold ID -1 and
//     distance +Inf (L2) or -Inf (IP).
//
// BruteForce is the float64 O(N·M·D) reference used by the tests. Exact
// (see its doc for the algorithm and numerics) is a packed,
// register-blocked 6×16 float32 micro-kernel whose epilogue converts inner
// products to distances and compares them with each query's current k-th
// distance, so the per-query top-k (a sorted list for k <= 32, a buffered
// radix select above) is touched only by candidates that can enter.
// KernelName reports the kernel chosen at run time from the CPU's features
// (internal/kernelsel; DMLBENCH_KERNEL=avx512|avx2|portable forces one):
//
//   - "avx512 asm 6x32": AVX-512F Go assembly (kernel_amd64.s), 12 ZMM
//     accumulators over 6 queries × 32 database items.
//   - "avx2-fma asm 6x16": AVX2+FMA Go assembly, 12 YMM accumulators,
//     VBROADCASTSS + VFMADD231PS.
//   - "portable 6x16": pure Go, for other architectures, CPUs without
//     AVX2+FMA and -tags purego builds.
//
// All three compute every pair as one FMA chain in ascending dimension
// (the portable one with internal/fma32) and share the epilogue, so they
// return the same bits: neighbours, distances and ranks do not depend on
// the CPU (TestKernelsIdentical).
//
// The assembly is written by internal/asmgen (go generate); it needs no
// GOEXPERIMENT, so `go build` and `go install` get it.
//
// Watch (Options.Watch) asks any backend that Watches for the exact ranks
// of chosen rows (a query's positives) up to a maximum rank, counted during
// the same scan: the retrieval metrics with long windows read these ranks
// instead of a search that deep. MeanPairwiseL2 runs the same kernel for a
// mean over all pairs. Work is spread over cores by internal/parallel.
package knn
