// Package distractors measures retrieval metrics against gallery size: the
// queries search nested, seeded random subsets of the gallery's
// distractors (items of no query's class) with every relevant item kept,
// at each of a list of gallery sizes. It replaces the single-point
// practice of adding one fixed distractor set (the revisited Oxford and
// Paris benchmarks' R1M, Radenović et al. 2018) with a curve, and shows how
// Recall@k depends on the number of competing items (Zhdanov & Karpukhin
// 2023). Each point carries a class-bootstrap interval
// (reports/compare.Interval).
//
// Cost: one search per size, proportional to the size, so geometric sizes
// cost at most Σ 10^−i ≈ 1.11× the largest size alone for a factor of 10.
package distractors
