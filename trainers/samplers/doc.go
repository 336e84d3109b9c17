// Package samplers builds training batches (lists of training-set indices)
// for dmlbench run: plain random batches and the class-balanced samplers of
// Roth et al. 2020 (supplementary Tab. 7–9): SPC-2, SPC-4, SPC-8
// (a fixed number of samples per class) and SPC-R (a random number of
// samples per class). Every random choice uses the *rand.Rand the trainer
// passes in, so a seed fixes the batches.
//
// Samplers that need the current embeddings of the training set implement
// EmbeddingSampler: the trainer embeds the whole training set with the
// current model and calls Refresh before asking for an epoch's batches (and
// only for those samplers). They are the embedding-aware samplers of seed
// 000 Tab. 7–9, with the rules of Roth et al.'s reference code (see each
// type for the exact rule and the Default* constants): DDM
// (distance-distribution matching), FRD (Fréchet-distance batch matching),
// GC (greedy coreset) and its D²-sampling variant gc-d2.
package samplers
