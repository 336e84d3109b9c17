// Package regularizers holds the training regularisers and embedding-space
// augmentations of the papers dmlbench reproduces, each in its own file:
//
//   - rho.go — ρ-regularisation (Roth et al. 2020 §5, supp. §B, §D): a tuple-miner
//     wrapper that, with probability p_switch, replaces a mined tuple's
//     negative by a positive of the anchor ("R-" variants of contrastive,
//     triplet, margin, SNR).
//   - das.go — Densely-Anchored Sampling (Liu et al. 2022 §3): Discriminative
//     Feature Scaling + Memorized Transformation Shifting produce T extra
//     embeddings per anchor, which join the batch.
//   - mixup.go — manifold mixup of embeddings for DML (Roth et al. 2020 §H, eq. 31).
//
// SiMix (Patel et al. 2024 §3.3) mixes scalar similarities inside the ranking grid of
// the similarity losses and therefore lives in trainers/losses (hyper-
// parameter simix = 1 of recallk and smoothap; see losses/simix.go).
//
// Augmenters (DAS, mixup) act between the embedding network and the loss.
// A training step with an augmenter (Apply) is
//
//	E  = f(X)                          (B×D, forward only)
//	views (E'_k, y'_k, w_k) = A(E, y)  E'_k a differentiable function of E
//	L  = Σ_k w_k · loss(E'_k, y'_k)
//	G  = Σ_k w_k · J_kᵀ · dloss/dE'_k  (Backward: the augmenter's Jacobian)
//
// after which the trainer back-propagates G = dL/dE through the network
// exactly as without an augmenter (multistage back-propagation, Patel et al. 2024
// Alg. 1). Every random choice is drawn from the *rand.Rand handed to
// Augment, so a seeded trainer reproduces its numbers; augmenters with
// memory (DAS) expose it through Stateful for the checkpoint.
package regularizers
