#!/usr/bin/env python3
"""A numpy-only trainer for `dmlbench tune` (docs/external.md).

A two-layer head (features → ReLU hidden → embedding, L2-normalised)
trained by Adam on the features `dmlbench data export` writes, with one of
two losses:

  contrastive  pairs of the batch on cosine similarity: 1 − s for positive
               pairs, max(0, s − margin) for negative ones (Hadsell et al.
               2006, on similarities as in Musgrave et al. 2020's
               ContrastiveLoss);
  proxy        normalised softmax over one learned proxy per class with
               temperature (Zhai & Wu 2019).

It reads its cell from DMLBENCH_CELL, trains on the rows it is given, and
after every epoch saves the embeddings of the rows dmlbench asks for; it
checkpoints every epoch and continues from the checkpoint when dmlbench
restarts it (DMLBENCH_RESUME=1). Every random draw comes from (seed, epoch),
so a resumed run equals an uninterrupted one.
"""

import argparse
import os
import sys

import numpy as np

try:
    import dmlbench
except ImportError:  # run from the repository without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
    import dmlbench


def l2n(z):
    n = np.linalg.norm(z, axis=1, keepdims=True) + 1e-12
    return z / n, n


def back_l2n(e, n, de):
    # gradient through e = z / |z|
    return (de - e * (e * de).sum(1, keepdims=True)) / n


class Head:
    def __init__(self, d_in, hidden, dim, rng):
        self.p = {"W1": rng.standard_normal((d_in, hidden)).astype(np.float32) * np.float32(np.sqrt(2 / d_in)),
                  "b1": np.zeros(hidden, np.float32),
                  "W2": rng.standard_normal((hidden, dim)).astype(np.float32) * np.float32(np.sqrt(1 / hidden))}

    def forward(self, x):
        h = np.maximum(x @ self.p["W1"] + self.p["b1"], 0)
        e, n = l2n(h @ self.p["W2"])
        return e, (x, h, e, n)

    def backward(self, cache, de):
        x, h, e, n = cache
        dz = back_l2n(e, n, de)
        g = {"W2": h.T @ dz}
        dh = (dz @ self.p["W2"].T) * (h > 0)
        g["W1"], g["b1"] = x.T @ dh, dh.sum(0)
        return g


def contrastive(e, y, margin):
    s = e @ e.T
    same = y[:, None] == y[None, :]
    np.fill_diagonal(same, False)
    diff = y[:, None] != y[None, :]
    npos, nneg = max(same.sum(), 1), max(diff.sum(), 1)
    active = diff & (s > margin)
    loss = (1 - s[same]).sum() / npos + (s[active] - margin).sum() / nneg
    g = np.where(same, -1.0 / npos, 0.0) + np.where(active, 1.0 / nneg, 0.0)
    return loss, ((g + g.T) @ e).astype(np.float32), None


def proxy_softmax(e, y, proxies, temperature):
    p, pn = l2n(proxies)
    logits = e @ p.T / temperature
    logits -= logits.max(1, keepdims=True)
    prob = np.exp(logits)
    prob /= prob.sum(1, keepdims=True)
    b = len(y)
    loss = -np.log(prob[np.arange(b), y] + 1e-12).mean()
    dl = prob
    dl[np.arange(b), y] -= 1
    dl /= b * temperature
    return loss, (dl @ p).astype(np.float32), back_l2n(p, pn, dl.T @ e).astype(np.float32)


class Adam:
    def __init__(self, params, lr):
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params, grads, b1=0.9, b2=0.999):
        self.t += 1
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            mh, vh = self.m[k] / (1 - b1 ** self.t), self.v[k] / (1 - b2 ** self.t)
            params[k] -= (self.lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)


def batches(y, classes_per_batch, per_class, steps, rng):
    """Per step: classes_per_batch classes, per_class rows of each (with
    replacement for small classes)."""
    by_class = {c: np.flatnonzero(y == c) for c in np.unique(y)}
    names = np.array(sorted(by_class))
    for _ in range(steps):
        cs = rng.choice(names, size=min(classes_per_batch, len(names)), replace=False)
        yield np.concatenate([rng.choice(by_class[c], size=per_class, replace=len(by_class[c]) < per_class) for c in cs])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loss", choices=["contrastive", "proxy"], required=True)
    loss_name = ap.parse_args().loss
    cell = dmlbench.cell()
    p = cell.params
    lr = float(p["lr"])
    # The cost settings come from the spec's fixed, shared by both methods;
    # hidden is a list of widths there, as for dmlbench's own MLP.
    h = p.get("hidden", [128])
    steps, dim, hidden = int(p.get("iters-per-epoch", 50)), int(p.get("embed-dim", 32)), int(h[0] if isinstance(h, list) else h)

    x_all = np.load(os.path.join(cell.data, "train_emb.npy"))
    x = x_all[cell.rows("train")]
    _, y = np.unique(cell.labels("train"), return_inverse=True)
    head = Head(x.shape[1], hidden, dim, np.random.default_rng(cell.seed))
    params = dict(head.p)
    if loss_name == "proxy":
        params["proxies"] = np.random.default_rng(cell.seed + 1).standard_normal((y.max() + 1, dim)).astype(np.float32)
    head.p = params
    opt = Adam(params, lr)
    ckpt = os.path.join(cell.dir, "checkpoint.npz")
    first = 1
    if cell.resume and os.path.exists(ckpt):
        z = np.load(ckpt)
        first = int(z["epoch"]) + 1
        for k in params:
            params[k][...] = z["p_" + k]
            opt.m[k], opt.v[k] = z["m_" + k], z["v_" + k]
        opt.t = int(z["t"])
    for epoch in range(first, cell.epochs + 1):
        rng = np.random.default_rng([cell.seed, epoch])
        total = 0.0
        for idx in batches(y, 8, 8, steps, rng):
            e, cache = head.forward(x[idx])
            if loss_name == "contrastive":
                loss, de, _ = contrastive(e, y[idx], float(p["margin"]))
                grads = head.backward(cache, de)
            else:
                loss, de, dp = proxy_softmax(e, y[idx], params["proxies"], float(p["temperature"]))
                grads = head.backward(cache, de)
                grads["proxies"] = dp
            if not np.isfinite(loss):
                dmlbench.exit_diverged(f"loss {loss} at epoch {epoch}")
            opt.step(params, grads)
            total += loss
        cell.log(epoch, total / steps)
        for split in cell.embed:
            rows = cell.rows(split)
            xs = np.load(os.path.join(cell.data, cell.embed[split]["split"] + "_emb.npy"))[rows]
            cell.save_embeddings(epoch, split, head.forward(xs)[0])
        state = {"epoch": epoch, "t": opt.t}
        for k in params:
            state["p_" + k], state["m_" + k], state["v_" + k] = params[k], opt.m[k], opt.v[k]
        tmp = ckpt + ".tmp.npz"
        np.savez(tmp, **state)
        os.replace(tmp, ckpt)


if __name__ == "__main__":
    main()
