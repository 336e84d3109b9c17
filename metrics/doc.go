// Package metrics scores embeddings for deep metric learning: Recall@k,
// NMI, F1, AMI, mAP@C, mAP@1000, MAP@R, R-Precision, ρ spectral decay and
// the intra/inter distance ratio, under three conventions (strict, roth,
// pml). Definitions: docs/metrics.md and the doc comment
// of each metric. One k-NN search serves every retrieval metric and one
// clustering serves NMI, F1 and AMI.
package metrics
