// Package compare compares two embeddings of the same test set: per-query
// values written as CSV or JSON lines (eval --per-query), and, per metric,
// the paired difference B − A with a bootstrap confidence interval and a
// sign-flip permutation p-value, both resampling classes (dmlbench
// compare).
//
// Queries of one class share their gallery positives and are not
// independent, so the unit of resampling is the class: the paired
// bootstrap draws classes with replacement (Efron and Tibshirani 1993,
// ch. 13), the permutation test flips the sign of each class's summed
// difference (Good 2005), as a cluster-level paired test.
package compare
