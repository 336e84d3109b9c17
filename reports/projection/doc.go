// Package projection maps embeddings to 2-D for figures (Seidenschwarz et al. 2021 §5–6:
// t-SNE views of the learned embedding spaces). TSNE is exact t-SNE (van
// der Maaten & Hinton 2008) in pure Go: O(N²) time and memory per
// iteration, rows processed in parallel, deterministic for a seed (every
// row's sums run in a fixed order whatever the thread count). SampleRows
// draws the seeded subsample of classes and rows a map shows.
package projection
