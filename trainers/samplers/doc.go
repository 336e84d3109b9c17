// Package samplers builds training batches (lists of training-set indices)
// for dmlbench run: plain random batches and the class-balanced samplers of
// seed 000 (Roth et al. 2020, supplementary Tab. 7–9): SPC-2, SPC-4, SPC-8
// (a fixed number of samples per class) and SPC-R (a random number of
// samples per class). Every random choice uses the *rand.Rand the trainer
// passes in, so a seed fixes the batches.
//
// Samplers that need the current embeddings of the training set (DDM, GC,
// FRD of a later issue) implement EmbeddingSampler: the trainer calls
// Refresh with the embeddings before asking for an epoch's batches.
package samplers
