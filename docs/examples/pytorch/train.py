#!/usr/bin/env python3
"""A PyTorch trainer for `dmlbench tune` (docs/external.md): a small CNN on
Omniglot's pixels as `dmlbench data export` writes them (one row of side²
values per image; run.sh exports 14×14).

Two conv blocks (3×3 conv, batch norm, ReLU, 2×2 max-pool; 32 and 64
channels), a linear layer to the embedding, L2-normalised; Adam; batches of
8 classes × 8 images. Losses: contrastive on cosine similarities (Hadsell et
al. 2006, as Musgrave et al. 2020's ContrastiveLoss) or a normalised
softmax over learned proxies (Zhai & Wu 2019). CPU by default, --device cuda
where there is one. Checkpoints every epoch in the cell's directory and
continues from it when dmlbench restarts the cell (DMLBENCH_RESUME=1); the
batches of an epoch come from (seed, epoch).
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

try:
    import dmlbench
except ImportError:  # run from the repository without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
    import dmlbench


class CNN(torch.nn.Module):
    def __init__(self, dim, side):
        super().__init__()
        self.side = side
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(64 * (side // 4) ** 2, dim)

    def forward(self, x):
        x = x.view(-1, 1, self.side, self.side)
        return F.normalize(self.head(self.features(x).flatten(1)), dim=1)


def contrastive(e, y, margin):
    s = e @ e.T
    same = (y[:, None] == y[None, :]) & ~torch.eye(len(y), dtype=torch.bool, device=e.device)
    diff = y[:, None] != y[None, :]
    return (1 - s[same]).mean() + F.relu(s[diff] - margin).sum() / diff.sum().clamp(min=1)


def proxy_softmax(e, y, proxies, temperature):
    return F.cross_entropy(e @ F.normalize(proxies, dim=1).T / temperature, y)


def batches(y, steps, gen):
    by_class = [np.flatnonzero(y == c) for c in range(y.max() + 1)]
    for _ in range(steps):
        cs = torch.randperm(len(by_class), generator=gen)[:8].tolist()
        idx = []
        for c in cs:
            rows = by_class[c]
            pick = torch.randint(len(rows), (8,), generator=gen).numpy()
            idx.extend(rows[pick])
        yield np.array(idx)


def embed(model, x, device):
    model.eval()
    with torch.no_grad():
        out = [model(torch.from_numpy(x[i:i + 512]).to(device)) for i in range(0, len(x), 512)]
    model.train()
    return torch.cat(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loss", choices=["contrastive", "proxy"], required=True)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    cell = dmlbench.cell()
    p = cell.params
    torch.set_num_threads(int(p.get("threads", 1)))
    torch.manual_seed(cell.seed)
    device = torch.device(args.device)
    x_all = np.load(os.path.join(cell.data, "train_emb.npy"))
    side = int(round(np.sqrt(x_all.shape[1])))
    x = x_all[cell.rows("train")]
    _, y = np.unique(cell.labels("train"), return_inverse=True)
    model = CNN(int(p.get("embed-dim", 64)), side).to(device)
    params = list(model.parameters())
    proxies = None
    if args.loss == "proxy":
        proxies = torch.nn.Parameter(torch.randn(y.max() + 1, model.head.out_features, device=device))
        params.append(proxies)
    opt = torch.optim.Adam(params, lr=float(p["lr"]))
    ckpt = os.path.join(cell.dir, "checkpoint.pt")
    first = 1
    if cell.resume and os.path.exists(ckpt):
        state = torch.load(ckpt, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        if proxies is not None:
            proxies.data.copy_(state["proxies"])
        first = state["epoch"] + 1
    xt = torch.from_numpy(x).to(device)
    yt = torch.from_numpy(y).to(device)
    for epoch in range(first, cell.epochs + 1):
        gen = torch.Generator().manual_seed(cell.seed * 1000 + epoch)
        total, steps = 0.0, int(p.get("iters-per-epoch", 40))
        for idx in batches(y, steps, gen):
            idx = torch.from_numpy(idx).to(device)
            e = model(xt[idx])
            if args.loss == "contrastive":
                loss = contrastive(e, yt[idx], float(p["margin"]))
            else:
                loss = proxy_softmax(e, yt[idx], proxies, float(p["temperature"]))
            if not torch.isfinite(loss):
                dmlbench.exit_diverged(f"loss {loss.item()} at epoch {epoch}")
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        cell.log(epoch, total / steps)
        for split in cell.embed:
            if cell.asks(epoch):
                xs = np.load(os.path.join(cell.data, cell.embed[split]["split"] + "_emb.npy"))[cell.rows(split)]
                cell.save_embeddings(epoch, split, embed(model, xs, device))
        tmp = ckpt + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch,
                    "proxies": None if proxies is None else proxies.detach()}, tmp)
        os.replace(tmp, ckpt)


if __name__ == "__main__":
    main()
