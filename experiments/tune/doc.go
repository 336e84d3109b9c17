// Package tune is the fair-comparison protocol of Musgrave, Belongie & Lim
// 2020 behind `dmlbench tune`: every method's hyper-parameters searched with
// the same budget by class-disjoint cross-validation on the training
// classes, then the best configuration trained on all of them and tested.
//
// A spec (spec.go: Load, Parse) names the data, the methods, their search
// spaces (search.Space), the budget, the folds and the objective. Plan
// turns it into cells: a trial is one point of a method's space trained once
// per fold (FoldClasses, FoldSplit: blocks of consecutive class ids, every
// training class validated once), a fold's score is the objective at its
// best validation epoch (FoldScore) and a trial's score the mean over the
// folds; Next proposes the next trials (TPE or random search, package
// search) from the finished ones. The final stage retrains the best trial
// per fold and repeat and tests on the test classes (final.go, repeats.go).
// Every cell is a directory with the command-cell contract of
// experiments/cell (RunCell), so a cell that ran survives a restart and
// the suite's local and Slurm executors run tune's cells as their own
// (slurm.go writes the array and the next-round scripts).
//
// docs/tune.md is the protocol and the spec's keys; the results are read by
// reports (Summary, ReadSummary).
package tune
