// Package trainers is the training engine of `dmlbench run`: it trains an
// embedding model (trainers/model) with a deep-metric-learning loss
// (trainers/losses, optionally a miner from trainers/miners) on batches from
// a sampler (trainers/samplers), evaluates on held-out classes with
// metrics.Evaluate, and records everything in a record.Run.
//
// One training step (multistage back-propagation, seed 004 Alg. 1):
//
//	E  = f(X_B)                    forward-only program, chunk by chunk
//	L, G = loss(E, y_B)            G = dL/dE, computed outside the graph
//	∇θ = Σ_chunks ∂(Σ f(X_c)⊙G_c)/∂θ    surrogate back-propagation
//	θ ← Adam(θ, ∇θ + λθ)           coupled L2 weight decay, as torch.optim.Adam
//
// Adam follows Kingma & Ba (2015), Alg. 1, with bias correction; the
// learning rate decays by γ after each epoch listed in lr-steps (step decay).
// A loss Param with LR > 0 uses that absolute rate (seed 000 supp. A.1:
// margin β lr 5e-4, ArcFace centres 5e-4, normalised-softmax proxies 1e-5),
// decayed by the same schedule. The defaults (Defaults) follow Roth et al.'s
// protocol (their main paper §4.1, which is not among the seed texts: Adam,
// weight decay 4e-4, batch 112, D = 128) except lr = 1e-3, suited to an MLP
// trained from scratch rather than a pretrained ResNet.
//
// Reproducibility: every random choice of epoch e draws from RNGs seeded by
// a hash of (seed, e, purpose), so a run resumed from the checkpoint written
// at the end of epoch e−1 (model + loss params, Adam moments and step, history)
// continues exactly like an uninterrupted one.
package trainers
