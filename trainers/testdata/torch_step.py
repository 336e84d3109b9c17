#!/usr/bin/env python3
"""Time one DML training step in PyTorch (CPU) for comparison with
`go test -bench TrainStep ./trainers/` (BenchmarkTrainStep).

Same step: MLP 512 -> Linear 512 -> LayerNorm -> ReLU -> Linear 128 -> L2 norm,
batch 112 (SPC-2: 56 classes x 2), multi-similarity loss (Wang et al. 2019;
alpha=2, beta=40, lambda=0.5, epsilon=0.1 pair mining), Adam lr 1e-3 with
coupled weight decay 4e-4. One step = forward, loss, backward, optimiser step
(both forward once per step when the batch fits one chunk, see trainers/model).

Usage: python3 torch_step.py [--threads 2] [--steps 200]
Debian: apt-get install -y python3-torch (1.13.1 in bookworm).
"""
import argparse
import ctypes
import time

import torch


def ms_loss(emb, labels, alpha=2.0, beta=40.0, lam=0.5, eps=0.1):
    """Multi-similarity loss with its pair mining, vectorised over anchors:
    negatives kept if S_an + eps > min positive S, positives kept if
    S_ap - eps < max negative S; loss = mean over anchors with both sets of
    1/alpha log(1 + sum_P e^{-alpha(S-lam)}) + 1/beta log(1 + sum_N e^{beta(S-lam)})."""
    sim = emb @ emb.t()
    b = emb.shape[0]
    same = labels[:, None] == labels[None, :]
    pos_mask = same & ~torch.eye(b, dtype=torch.bool)
    neg_mask = ~same
    inf = torch.tensor(float("inf"))
    min_pos = torch.where(pos_mask, sim, inf).min(1).values
    max_neg = torch.where(neg_mask, sim, -inf).max(1).values
    neg_keep = neg_mask & (sim + eps > min_pos[:, None])
    pos_keep = pos_mask & (sim - eps < max_neg[:, None])
    lp = torch.log1p((torch.exp(-alpha * (sim - lam)) * pos_keep).sum(1)) / alpha
    ln = torch.log1p((torch.exp(beta * (sim - lam)) * neg_keep).sum(1)) / beta
    valid = pos_keep.any(1) & neg_keep.any(1)
    if not bool(valid.any()):
        return (emb * 0).sum()
    return (lp + ln)[valid].mean()


def set_threads(n):
    """torch.set_num_threads(n), and the same limit for OpenBLAS: Debian's
    PyTorch sends its matrix products to the system BLAS (OpenBLAS through
    libblas.so.3), whose thread pool torch.set_num_threads does not reach."""
    torch.set_num_threads(n)
    try:
        ctypes.CDLL("libblas.so.3").openblas_set_num_threads(n)
    except (OSError, AttributeError):
        pass  # not OpenBLAS: nothing else to limit


def spc2_batches(x_all, y_all, classes, count=16, seed=1):
    """`count` SPC-2 batches (56 classes x 2 samples) of (x_all, y_all)."""
    g = torch.Generator().manual_seed(seed)

    def batch():
        cls = torch.randperm(classes, generator=g)[:56]
        idx = []
        for c in cls.tolist():
            members = (y_all == c).nonzero().flatten()
            idx += members[torch.randperm(len(members), generator=g)[:2]].tolist()
        idx = torch.tensor(idx)
        return x_all[idx], y_all[idx]

    return [batch() for _ in range(count)]


def make_step(model, opt, batches):
    """One training step on batch i mod len(batches): forward, L2-normalise,
    multi-similarity loss, backward, Adam step."""
    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        e = torch.nn.functional.normalize(model(x), dim=1)
        loss = ms_loss(e, y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def time_steps(step, warmup, steps):
    """Seconds per step after `warmup` untimed steps."""
    for i in range(warmup):
        step(i)
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    return (time.perf_counter() - t0) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    set_threads(args.threads)
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.LayerNorm(512), torch.nn.ReLU(), torch.nn.Linear(512, 128))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=4e-4)
    n, classes = 1120, 112
    x_all = torch.randn(n, 512)
    y_all = torch.arange(n) % classes
    step = make_step(model, opt, spc2_batches(x_all, y_all, classes))
    dt = time_steps(step, args.warmup, args.steps)
    print(f"torch {torch.__version__} threads={args.threads}: {dt * 1e3:.2f} ms/step "
          f"(MLP 512-512-128, batch 112, MS loss)")


if __name__ == "__main__":
    main()
