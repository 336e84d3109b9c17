// Package clustering groups embeddings for the clustering metrics (NMI, F1,
// AMI) and for test-time clustering experiments (seed 001 Tab. 4).
//
// KMeans is faiss 1.7.3's k-means (Clustering::train) reproduced step by
// step in pure Go, random streams included: faiss's RandomGenerator
// (C++ std::mt19937, rng.go) drives the subsample (the first K·Max rows of
// rand_perm(n, seed)), the initial centroids (the first K of
// rand_perm(nt, seed + 1)) and the empty-cluster splits
// (split_clusters with its own RandomGenerator(1234)); centroids and the
// training objective are accumulated in float32 in faiss's order. The
// same seed therefore gives faiss's clusters, not just clusters of the
// same quality: pinned by a golden test against python3-faiss 1.7.3
// (testdata/faiss_kmeans_gen.py) and, with -tags faiss, by NMI/F1 parity
// with FaissKMeans. See KMeans for the steps and the one known divergence
// (exact duplicate rows after a split).
//
// KMeansPreset holds each evaluation convention's settings, read by both
// KMeans's and FaissKMeans's callers: strict and roth = Roth et al. 2020's
// faiss.Clustering call (20 iterations, seed 1234, min 1 point per
// centroid, no subsampling); pml = pytorch-metric-learning v2.8.1's
// faiss.Kmeans(niter=20) (seed 1234, min 39, max 256 points per centroid,
// i.e. training on a subsample of 256·K rows when there are more).
//
// Assignments run through NearestCentroids, an exact blocked k = 1 search
// whose micro-kernel keeps a 4-row × 16-centroid block of squared distances
// in registers and fuses the arg-min into the epilogue (no N×K distance
// matrix). With GOEXPERIMENT=simd on amd64 with AVX2+FMA it is an archsimd
// kernel (KernelName reports "avx2-fma-4x16"), otherwise a portable scalar
// kernel with the same summation order per pair. Inside KMeans the
// repeated assignments are pruned with Yinyang k-means (Ding et al., ICML
// 2015; yinyang.go): group lower bounds on true Euclidean distances, kept in
// float64/float32 with a derived float32 rounding margin, skip the groups
// and 16-centroid panels that provably cannot hold a better centroid, and
// the survivors are evaluated with the same kernel arithmetic, so results
// are bit-identical to full passes. Results are deterministic and do not
// depend on the thread count. KMeansOptions.Searcher can route the
// assignment through any knn.Searcher instead.
//
// The Clusterer interface and its registry (Algorithms, New, Names) expose
// the algorithms of seed 001 Tab. 4 by name: "kmeans", "ward" (NN-chain
// agglomerative), "spectral" (k-NN graph, normalised Laplacian),
// "birch" (CF-tree + k-means), "dbscan" and "optics" (density-based; Noise
// = −1 marks unclustered rows, NoiseAsSingletons turns them into singleton
// clusters for partition metrics). Each algorithm has its complexity and
// source in its doc comment; Params/DefaultParams hold every setting (K = 900,
// eps = 0.9, min samples = 5 as seed 001 Tab. 4).
//
// The faiss-backed k-means (build tag faiss) lives in faiss*.go and shares
// KMeansOptions/KMeansResult.
package clustering
