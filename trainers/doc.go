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
// learning rate decays by γ at each epoch listed in lr-steps (step decay,
// seed 000 §4.1 / supplementary A uses Adam with lr decay); a loss Param
// with LR > 0 (proxies, margin β, seed 000 supp. A) uses that absolute rate,
// decayed by the same schedule.
//
// Reproducibility: every random choice of epoch e draws from RNGs seeded by
// a hash of (seed, e, purpose), so a run resumed from the checkpoint written
// at the end of epoch e−1 (model + loss params, Adam moments and step, history)
// continues exactly like an uninterrupted one.
package trainers
