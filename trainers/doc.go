// Package trainers is the training engine of `dmlbench run`: it trains an
// embedding model (trainers/model) with a deep-metric-learning loss
// (trainers/losses, optionally a miner from trainers/miners) on batches from
// a sampler (trainers/samplers), evaluates on held-out classes with
// metrics.Evaluate, and records everything in a record.Run.
//
// One training step (multistage back-propagation, Patel et al. 2024 Alg. 1):
//
//	E  = f(X_B)                    forward, chunk by chunk
//	L, G = loss(E, y_B)            G = dL/dE, computed outside the network
//	∇θ = Σ_chunks ∂(Σ f(X_c)⊙G_c)/∂θ    surrogate back-propagation
//	θ ← Adam(θ, ∇θ + λθ)           coupled L2 weight decay, as torch.optim.Adam
//
// With --chunk smaller than the batch this is Patel et al. 2024's Alg. 1 line
// for line: the no-grad forward (l. 8–9), the loss and its gradient w.r.t.
// the detached embeddings (l. 10–12), and the re-forward with
// back-propagation of the stored gradient (l. 14–16). Alg. 1 re-forwards one
// image at a time; Backward re-forwards --chunk rows at a time, which gives
// the same ∇θ because the model has no cross-sample operation (layer norm,
// not batch norm): ∂(Σ_i f(x_i)·g_i)/∂θ is a sum over rows, so --chunk 1 is
// Alg. 1 exactly and larger chunks only trade memory for speed. When the
// batch fits one chunk (the default) the activations of the forward are
// kept and back-propagated directly (BackwardKept): one forward per step,
// the same numbers.
//
// Regularisers (trainers/regularizers): --rho-reg wraps the miner of a
// tuple loss (ρ-regularisation); --das or --mixup put an embedding
// augmenter between steps 1 and 2 — L and G are then computed on the
// augmented views and mapped back to dL/dE by the augmenter's Jacobian
// (regularizers.Apply) before step 3. The augmenter draws from its own
// (seed, epoch) stream, and DAS's memory (frequency recorder, banks) is
// saved in the checkpoint.
//
// Adam follows Kingma & Ba (2015), Alg. 1, with bias correction; the
// learning rate decays by γ after each epoch listed in lr-steps (step decay).
// A loss Param with LR > 0 uses that absolute rate (Roth et al. 2020 supp. A.1:
// margin β lr 5e-4, ArcFace centres 5e-4, normalised-softmax proxies 1e-5),
// decayed by the same schedule. The defaults (Defaults) follow Roth et al.'s
// protocol (their main paper §4.1: Adam,
// weight decay 4e-4, batch 112, D = 128) except lr = 1e-3, suited to an MLP
// trained from scratch rather than a pretrained ResNet.
//
// Reproducibility: every random choice of epoch e draws from RNGs seeded by
// a hash of (seed, e, purpose), so a run resumed from the checkpoint written
// at the end of epoch e−1 (model + loss params, Adam moments and step, history)
// continues exactly like an uninterrupted one.
package trainers
