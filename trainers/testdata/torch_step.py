#!/usr/bin/env python3
"""Time one DML training step in PyTorch (CPU) for comparison with
`go test -bench TrainStep ./trainers/` (BenchmarkTrainStep).

Same step: MLP 512 -> Linear 512 -> LayerNorm -> ReLU -> Linear 128 -> L2 norm,
batch 112 (SPC-2: 56 classes x 2), multi-similarity loss (Wang et al. 2019;
alpha=2, beta=40, lambda=0.5, epsilon=0.1 pair mining), Adam lr 1e-3 with
coupled weight decay 4e-4. One step = forward, loss, backward, optimiser step
(PyTorch keeps the graph, so it forwards once; dmlbench forwards twice, see
trainers/model).

Usage: python3 torch_step.py [--threads 2] [--steps 200]
Debian: apt-get install -y python3-torch (1.13.1 in bookworm).
"""
import argparse
import time

import torch


def ms_loss(emb, labels, alpha=2.0, beta=40.0, lam=0.5, eps=0.1):
    sim = emb @ emb.t()
    b = emb.shape[0]
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(b, dtype=torch.bool)
    pos_mask = same & ~eye
    neg_mask = ~same
    total = emb.new_zeros(())
    n = 0
    for i in range(b):
        pos = sim[i][pos_mask[i]]
        neg = sim[i][neg_mask[i]]
        if pos.numel() == 0 or neg.numel() == 0:
            continue
        neg_kept = neg[neg + eps > pos.min()]
        pos_kept = pos[pos - eps < neg.max()]
        if neg_kept.numel() == 0 or pos_kept.numel() == 0:
            continue
        lp = torch.log1p(torch.exp(-alpha * (pos_kept - lam)).sum()) / alpha
        ln = torch.log1p(torch.exp(beta * (neg_kept - lam)).sum()) / beta
        total = total + lp + ln
        n += 1
    return total / max(n, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.LayerNorm(512), torch.nn.ReLU(), torch.nn.Linear(512, 128))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=4e-4)
    n, classes = 1120, 112
    x_all = torch.randn(n, 512)
    y_all = torch.arange(n) % classes
    g = torch.Generator().manual_seed(1)

    def batch():
        cls = torch.randperm(classes, generator=g)[:56]
        idx = []
        for c in cls.tolist():
            members = (y_all == c).nonzero().flatten()
            idx += members[torch.randperm(len(members), generator=g)[:2]].tolist()
        idx = torch.tensor(idx)
        return x_all[idx], y_all[idx]

    batches = [batch() for _ in range(16)]

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        e = torch.nn.functional.normalize(model(x), dim=1)
        loss = ms_loss(e, y)
        loss.backward()
        opt.step()
        return loss.item()

    for i in range(args.warmup):
        step(i)
    t0 = time.perf_counter()
    for i in range(args.steps):
        step(i)
    dt = (time.perf_counter() - t0) / args.steps
    print(f"torch {torch.__version__} threads={args.threads}: {dt * 1e3:.2f} ms/step "
          f"(MLP 512-512-128, batch 112, MS loss)")


if __name__ == "__main__":
    main()
