"""Renders each dmlbench figure type next to the same figure drawn with matplotlib.

For every figure, dmlbench (gonum/plot) draws it from the shipped example runs
(docs/examples/omniglot/runs, runs-dims) or the example embeddings
(docs/examples/query-gallery), matplotlib draws the same numbers (the means and
sample standard deviations over seeds that dmlbench plots), and the two PNGs are
put side by side into docs/examples/figures/NAME.png.

    make build && /usr/bin/python3 docs/examples/figures/compare.py
(needs Debian's python3-matplotlib and python3-sklearn; BIN overrides bin/dmlbench)
"""
import glob
import json
import os
import subprocess
import tempfile
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.environ.get("BIN", os.path.join(ROOT, "bin", "dmlbench"))
OUT = os.path.join(ROOT, "docs", "examples", "figures")
RUNS = os.path.join(ROOT, "docs", "examples", "omniglot", "runs")
DIMS = os.path.join(ROOT, "docs", "examples", "omniglot", "runs-dims")
QG = os.path.join(ROOT, "docs", "examples", "query-gallery")
FIGSIZE = (6, 4)  # dmlbench's default, inches
PAPER = (3.3, 2.4)  # dmlbench --style paper, inches, 8 pt text
DPI = 150  # both sides are drawn at this resolution (dmlbench --dpi 150; its default is 300)
plt.rcParams.update({"font.size": 10, "legend.fontsize": 9, "axes.titlesize": 11})


def load(root):
    runs = []
    for p in sorted(glob.glob(os.path.join(root, "**", "run.json"), recursive=True)):
        with open(p) as f:
            r = json.load(f)
        if r.get("status") == "done":
            runs.append(r)
    return runs


def label(r):
    m = r["method"]
    return "%s/%s" % (m.get("loss", "") or "-", m.get("miner", "") or "-")


def groups(runs, key=label):
    g = defaultdict(list)
    for r in runs:
        if "history" in r:  # trained runs (the eval-only pixel row has no curves)
            g[key(r)].append(r)
    return dict(sorted(g.items()))


def styles(runs, key=label):
    """Colour index of each method: its place among all the directory's methods, sorted
    (pixels included), as dmlbench's MethodStyles, so a method has one colour everywhere."""
    return {name: i for i, name in enumerate(sorted({key(r) for r in runs}))}


# Okabe & Ito 2008, in dmlbench's order (reports/plots/palette.go).
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]


def colour(i):
    return OKABE_ITO[i % len(OKABE_ITO)]


def named(name, n):
    """Legend entry with the number of runs, as dmlbench writes it."""
    return "%s (n = %d)" % (name, n)


def mean_std(xs):
    xs = np.asarray(xs, dtype=float)
    return xs.mean(), (xs.std(ddof=1) if len(xs) > 1 else 0.0)


def styled(ax, title, xlabel, ylabel):
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


MARKERS = ["o", "s", "^", "+", "x", "D", "v"]


def mpl_curves(path):
    fig, axes = plt.subplots(1, 2, figsize=(2 * FIGSIZE[0], FIGSIZE[1]))
    st = styles(load(RUNS))
    for name, rs in groups(load(RUNS)).items():
        i = st[name]
        epochs = [h["epoch"] for h in rs[0]["history"]]
        loss = np.array([[h["loss"] for h in r["history"]] for r in rs])
        r1 = 100 * np.array([[h["metrics"]["R@1"] for h in r["history"]] for r in rs])
        for ax, v in ((axes[0], loss), (axes[1], r1)):
            ax.errorbar(epochs, v.mean(0), yerr=v.std(0, ddof=1), color=colour(i), marker=MARKERS[i], mfc="none", capsize=3, label=named(name, len(rs)))
    styled(axes[0], "training loss", "epoch", "loss")
    styled(axes[1], "test R@1", "epoch", "R@1 (%)")
    axes[1].legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


def mpl_rho(path):
    fig, ax = plt.subplots(figsize=FIGSIZE)
    st = styles(load(RUNS))
    for name, rs in groups(load(RUNS)).items():
        i = st[name]
        rho = [r["final"]["rho"] for r in rs]
        r1 = [100 * r["final"]["R@1"] for r in rs]
        (x, xe), (y, ye) = mean_std(rho), mean_std(r1)
        ax.errorbar([x], [y], xerr=[xe], yerr=[ye], color=colour(i), marker=MARKERS[i], mfc="none", capsize=3, ls="none", label=named(name, len(rs)))
    styled(ax, "spectral decay ρ vs R@1", "ρ (spectral decay)", "R@1 (%)")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


def mpl_log2_lines(path, lines, xs, title, xlabel, ylabel, st, figsize=FIGSIZE, names=None):
    """Draws lines (label → (means, stds, n) at xs) on a log2 x axis ticked at xs; names
    maps labels to display names (dmlbench --rename)."""
    names = names or {}
    fig, ax = plt.subplots(figsize=figsize)
    for name, (m, s, n) in lines.items():
        i = st[name]
        ax.errorbar(xs, m, yerr=s, color=colour(i), marker=MARKERS[i], mfc="none", capsize=3, label=named(names.get(name, name), n))
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    styled(ax, title, xlabel, ylabel)
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


def all_groups(runs, key=label):
    g = defaultdict(list)
    for r in runs:
        g[key(r)].append(r)
    return dict(sorted(g.items()))


def recall_lines():
    lines = {}
    for name, rs in all_groups(load(RUNS)).items():
        ks = sorted(int(k[2:]) for k in rs[0]["final"] if k.startswith("R@"))
        v = 100 * np.array([[r["final"]["R@%d" % k] for k in ks] for r in rs])
        lines[name] = (v.mean(0), v.std(0, ddof=1) if len(rs) > 1 else np.zeros(len(ks)), len(rs))
    return lines, ks


def mpl_recall(path):
    lines, ks = recall_lines()
    mpl_log2_lines(path, lines, ks, "Recall@k", "k", "R@k (%)", styles(load(RUNS)))


PAPER_NAMES = {"pixels/-": "Pixels", "contrastive/distance": "Contrastive", "margin/distance": "Margin",
               "multisimilarity/none": "Multi-Similarity", "triplet/distance": "Triplet"}


def mpl_recall_paper(path):
    lines, ks = recall_lines()
    with plt.rc_context({"font.size": 8, "legend.fontsize": 7, "axes.titlesize": 9, "lines.linewidth": 1.2, "lines.markersize": 4}):
        # --style paper draws no title: the paper's caption is the title.
        mpl_log2_lines(path, lines, ks, "", "k", "Recall@k (%)", styles(load(RUNS)), figsize=PAPER, names=PAPER_NAMES)


def mpl_sweep(path):
    by = defaultdict(lambda: defaultdict(list))
    for r in load(DIMS):
        by[r["method"]["loss"]][r["config"]["embed-dim"]].append(100 * r["final"]["R@1"])
    lines = {}
    for loss, d in sorted(by.items()):
        dims = sorted(d)
        ms = [mean_std(d[k]) for k in dims]
        lines[loss] = ([m for m, _ in ms], [s for _, s in ms], min(len(d[k]) for k in dims))
    mpl_log2_lines(path, lines, dims, "R@1 vs embed-dim", "embedding dimension", "R@1 (%)", {k: i for i, k in enumerate(sorted(lines))})


def mpl_spectrum(path):
    fig, ax = plt.subplots(figsize=FIGSIZE)
    st = styles(load(RUNS))
    for name, rs in groups(load(RUNS)).items():
        i = st[name]
        s = np.array([np.sort(r["spectrum"])[::-1][:64] / np.sum(r["spectrum"]) for r in rs])
        idx = np.arange(1, s.shape[1] + 1)
        m, sd = s.mean(0), s.std(0, ddof=1)
        ax.plot(idx, m, color=colour(i), marker=MARKERS[i], markevery=6, mfc="none", label=named(name, len(rs)))
        ax.fill_between(idx, m - sd, m + sd, color=colour(i), alpha=0.35, lw=0)
    ax.set_yscale("log")
    styled(ax, "singular value spectrum", "index i (sorted)", r"s$_i$ / Σ$_j$ s$_j$")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


def mpl_tsne(path):
    from sklearn.manifold import TSNE

    d = np.load(os.path.join(QG, "gallery.npz"))
    x, y = d["embeddings"], d["labels"]
    names = [line.strip() for line in open(os.path.join(QG, "gallery_names.txt"))]
    yx = TSNE(n_components=2, perplexity=20, init="random", random_state=1).fit_transform(x)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for k, c in enumerate(sorted(set(y))):
        m = y == c
        ax.scatter(yx[m, 0], yx[m, 1], s=12, color=plt.cm.tab10(k % 10), marker=MARKERS[k // 10], label=names[np.argmax(m)])
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1, 0.5))
    styled(ax, "t-SNE", "t-SNE 1", "t-SNE 2")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


RETRIEVAL_QUERIES = [3, 50, 700, 1200, 2000]
RETRIEVAL_TOP = 6


def mpl_retrieval(path, demo):
    """The retrieval figure: each query, then its nearest rows by cosine distance (leave-one-out),
    framed bluish green (solid) when of the query's class, vermillion (dashed) otherwise."""
    x, y = np.load(os.path.join(demo, "emb.npy")), np.load(os.path.join(demo, "labels.npy"))
    side = int(round(np.sqrt(x.shape[1])))
    cols = 1 + RETRIEVAL_TOP
    fig, axes = plt.subplots(len(RETRIEVAL_QUERIES), cols, figsize=(PAPER[0], PAPER[0] / (cols + 0.25) * len(RETRIEVAL_QUERIES)),
                             gridspec_kw={"wspace": 0.12, "hspace": 0.12})
    for r, q in enumerate(RETRIEVAL_QUERIES):
        d = 1 - x @ x[q]
        d[q] = np.inf
        hits = np.argsort(d, kind="stable")[:RETRIEVAL_TOP]
        for c, row in enumerate([q] + list(hits)):
            ax = axes[r, c]
            ax.imshow(x[row].reshape(side, side), cmap="gray_r", vmin=0)
            ax.set_xticks([])
            ax.set_yticks([])
            col, ls = ("black", "solid") if c == 0 else (("#009E73", "solid") if y[row] == y[q] else ("#D55E00", "dashed"))
            for sp in ax.spines.values():
                sp.set_edgecolor(col)
                sp.set_linewidth(1.5)
                sp.set_linestyle(ls)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.02)


def dmlbench(args):
    subprocess.run([BIN] + args + ["--dpi", str(DPI)], check=True, cwd=ROOT, stderr=subprocess.DEVNULL)


def side_by_side(name, ours, theirs):
    a, b = plt.imread(ours), plt.imread(theirs)
    h = max(a.shape[0], b.shape[0])
    fig, axes = plt.subplots(1, 2, figsize=((a.shape[1] + b.shape[1]) / DPI, h / DPI + 0.4), dpi=DPI)
    for ax, img, title in ((axes[0], a, "dmlbench (gonum/plot)"), (axes[1], b, "matplotlib %s" % matplotlib.__version__)):
        ax.imshow(img)
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout(pad=0.2)
    fig.savefig(os.path.join(OUT, name + ".png"), dpi=DPI)
    plt.close("all")


def main():
    tmp = tempfile.mkdtemp()
    figs = {
        "curves": (["plot", "curves", RUNS, "--group-by", "loss,miner", "--metric", "R@1"], mpl_curves),
        "rho": (["plot", "rho", RUNS, "--group-by", "loss,miner"], mpl_rho),
        "recall": (["plot", "recall", RUNS, "--group-by", "loss,miner"], mpl_recall),
        "recall-paper": (["plot", "recall", RUNS, "--group-by", "loss,miner", "--style", "paper", "--ylabel", "Recall@k (%)"]
                         + [a for k, v in PAPER_NAMES.items() for a in ("--rename", "%s=%s" % (k, v))], mpl_recall_paper),
        "sweep-dims": (["plot", "sweep", DIMS, "--param", "embed-dim", "--group-by", "loss", "--metric", "R@1"], mpl_sweep),
        "spectrum": (["plot", "spectrum", RUNS, "--group-by", "loss,miner", "--top", "64"], mpl_spectrum),
        "tsne": (["plot", "tsne", "--emb", os.path.join(QG, "gallery.npz:embeddings"), "--labels",
                  os.path.join(QG, "gallery_names.txt"), "--classes", "20", "--perplexity", "20", "--seed", "1"], mpl_tsne),
    }
    demo = os.path.join(tmp, "demo")
    subprocess.run([BIN, "data", "export", "--dataset", "omniglot", "--split", "test", "--normalize", "--out", demo],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    figs["retrieval"] = (["show", "--emb", os.path.join(demo, "emb.npy"), "--labels", os.path.join(demo, "labels.npy"),
                          "--dataset", "omniglot", "--distance", "cosine", "--format", "png",
                          "--queries", ",".join(map(str, RETRIEVAL_QUERIES)), "--top", str(RETRIEVAL_TOP)],
                         lambda path: mpl_retrieval(path, demo))
    for name, (args, mpl) in figs.items():
        ours, theirs = os.path.join(tmp, name + "-dmlbench.png"), os.path.join(tmp, name + "-mpl.png")
        dmlbench(args + ["--out", ours])
        mpl(theirs)
        side_by_side(name, ours, theirs)
        print("wrote", os.path.join(OUT, name + ".png"))


if __name__ == "__main__":
    main()
