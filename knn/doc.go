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
package knn
