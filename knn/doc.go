// Package knn finds exact k nearest neighbours of query rows among database
// rows. It is the single distance computation behind every retrieval metric
// in dmlbench: metrics.Evaluate runs one Search at the largest depth any
// requested metric needs and all metrics read the same Neighbors.
//
// Contract shared by every Searcher (Exact, and Faiss/FaissGPU behind build
// tags):
//
//   - Rows are float32, row-major (Matrix).
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
// BruteForce is the float64 O(N·M·D) reference used by the tests. Exact is
// the default backend (see its doc for the algorithm and numerics): a packed,
// register-blocked 6×16 float32 micro-kernel whose epilogue converts inner
// products to distances and compares them with each query's current k-th
// distance, so the per-query top-k (a sorted list for k <= 32, a buffered
// radix select above) is touched only by candidates that can enter.
// KernelName reports the kernel chosen at run time:
//
//   - "avx2-fma asm 6x16": Go assembly (kernel_avx2_amd64.s), 12 YMM
//     accumulators, VBROADCASTSS + VFMADD231PS; needs GOEXPERIMENT=simd
//     (for the archsimd CPU-feature check) on amd64 and AVX2+FMA at run time.
//   - "avx2-fma archsimd 6x16": the same kernel in simd/archsimd Float32x8
//     code, compiled alongside as a cross-check. Go 1.26 spills this shape
//     (16 YMM registers, destructive VFMADD213PS) and reaches about half the
//     assembly kernel's speed, so it is never the default.
//   - "portable 6x16": pure Go, for other architectures or builds without
//     GOEXPERIMENT=simd.
package knn
