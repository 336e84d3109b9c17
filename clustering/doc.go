// Package clustering groups embeddings for the clustering metrics (NMI, F1,
// AMI). KMeans is Lloyd's algorithm with faiss's conventions so that numbers
// match the literature's faiss-based evaluation code; assignments reuse the
// knn package's exact search.
package clustering
