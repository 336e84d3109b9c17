#!/usr/bin/python3
"""Regenerate the faiss k-means goldens that clustering's TestKMeansFaissGolden reads.

Needs Debian's python3-faiss 1.7.3 (apt-get install python3-faiss) and numpy,
run with the system interpreter from clustering/testdata:

    /usr/bin/python3 faiss_kmeans_gen.py

Each case is a small embedding whose values are multiples of 2^-12 (stored
exactly as little-endian int16 counts of 2^-12 in faiss_kmeans/<name>.i16, so
Go and faiss see the same float32 values), its class labels, and a k-means
preset of a convention (clustering/presets.go). For each case faiss's own
Clustering runs with that preset exactly as the peers' evaluation code calls
it (faiss.Clustering + IndexFlatL2 for Roth et al. 2020; faiss.Kmeans for
pytorch-metric-learning), then every row is assigned to its nearest final
centroid with an IndexFlatL2 search (k = 1). Recorded per case: the rows of
the initial centroids (checked against a niter = 0 run of the same
Clustering), the number of empty-cluster splits, faiss's training objective
per iteration (its float32 sum of BLAS distances), the final assignment and
NMI (arithmetic normalisation, as scikit-learn's default) against the labels.
"""
import json
import os

import faiss
import numpy as np

SCALE = 4096.0
OUT = os.path.dirname(os.path.abspath(__file__))

PRESETS = {
    "roth": dict(niter=20, seed=1234, min_points_per_centroid=1, max_points_per_centroid=1000000000),
    "pml": dict(niter=20, seed=1234, min_points_per_centroid=39, max_points_per_centroid=256),
}


def quantise(x):
    q = np.round(np.asarray(x, dtype=np.float64) * SCALE)
    assert np.abs(q).max() < 32767
    return q.astype("<i2")


def sphere_classes(rs, classes, per_class, d, spread):
    """Class means uniform on the unit sphere, Gaussian noise, rows L2-normalised, shuffled."""
    mu = rs.standard_normal((classes, d))
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    lab = np.repeat(np.arange(classes), per_class)
    x = mu[lab] + spread * rs.standard_normal((len(lab), d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    p = rs.permutation(len(lab))
    return x[p], lab[p]


def jittered(rs, distinct, copies, d, noise):
    """distinct random points, each repeated copies times with Gaussian
    jitter (shuffled): many centroids start inside one tight group, and
    some of them lose all their points on the way (empty-cluster splits)."""
    pts = rs.uniform(-2, 2, (distinct, d))
    lab = np.repeat(np.arange(distinct), copies)
    x = pts[lab] + noise * rs.standard_normal((len(lab), d))
    p = rs.permutation(len(lab))
    return x[p], lab[p]


def two_gaussians(rs, m, d, offset):
    """PML's mutual-information test data: randn(m, d) and randn(m, d) + offset."""
    x = np.concatenate([rs.standard_normal((m, d)), rs.standard_normal((m, d)) + offset])
    return x, np.repeat([0, 1], m)


def nmi(a, b):
    """Normalised mutual information, arithmetic mean of the entropies."""
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    n = len(a)
    c = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(c, (a, b), 1)
    pa, pb, pab = c.sum(1) / n, c.sum(0) / n, c / n
    nz = pab > 0
    mi = (pab[nz] * np.log(pab[nz] / np.outer(pa, pb)[nz])).sum()
    ha = -(pa[pa > 0] * np.log(pa[pa > 0])).sum()
    hb = -(pb[pb > 0] * np.log(pb[pb > 0])).sum()
    if ha == 0 and hb == 0:
        return 1.0
    return float(mi / ((ha + hb) / 2))


def clustering(d, k, preset, niter=None):
    cp = faiss.ClusteringParameters()
    for key, v in PRESETS[preset].items():
        setattr(cp, key, v)
    if niter is not None:
        cp.niter = niter
    return faiss.Clustering(d, k, cp)


def run(name, x, lab, k, preset):
    n, d = x.shape
    clus = clustering(d, k, preset)
    index = faiss.IndexFlatL2(d)
    clus.train(x, index)
    cent = faiss.vector_float_to_array(clus.centroids).reshape(k, d)
    search = faiss.IndexFlatL2(d)
    search.add(cent)
    _, assign = search.search(x, 1)
    assign = assign.ravel()
    if preset == "pml":
        # pytorch-metric-learning's own call (utils/inference.py FaissKMeans).
        km = faiss.Kmeans(d, k, niter=20)
        km.train(x)
        _, a2 = km.index.search(x, 1)
        assert np.array_equal(a2.ravel(), assign), name
    stats = clus.iteration_stats
    nsplit = sum(stats.at(i).nsplit for i in range(stats.size()))
    obj = [float(stats.at(i).obj) for i in range(stats.size())]

    # Initial centroid rows: faiss's rand_perm streams, confirmed by a
    # niter = 0 Clustering (whose centroids are the initial ones).
    p = PRESETS[preset]
    rows = np.arange(n)
    if n > k * p["max_points_per_centroid"]:
        perm = np.zeros(n, dtype="int32")
        faiss.rand_perm(faiss.swig_ptr(perm), n, p["seed"])
        rows = perm[: k * p["max_points_per_centroid"]]
    perm = np.zeros(len(rows), dtype="int32")
    faiss.rand_perm(faiss.swig_ptr(perm), len(rows), p["seed"] + 1)
    init = rows[perm[:k]]
    c0 = clustering(d, k, preset, niter=0)
    c0.train(x, faiss.IndexFlatL2(d))
    assert np.array_equal(faiss.vector_float_to_array(c0.centroids).reshape(k, d), x[init]), name

    return dict(
        name=name, rows=n, cols=d, k=k, preset=preset,
        train_points=len(rows), init_rows=init.tolist(), splits=int(nsplit), objective=obj,
        assign=assign.tolist(), labels=lab.tolist(), nmi=nmi(lab, assign),
    )


def main():
    R = np.random.RandomState
    cases = []
    specs = [
        # The issue's new-user case: 3000 x 64, 60 classes (Roth et al.'s preset).
        ("sphere3000x64c60", sphere_classes(R(1), 60, 50, 64, 0.09), 60, "roth"),
        # Noisy classes: many near-ties between centroids.
        ("noisy2000x32c40", sphere_classes(R(2), 40, 50, 32, 0.25), 40, "roth"),
        # pytorch-metric-learning's preset subsamples 256·k of 2000 rows.
        ("pmlsubsample2000x16c5", sphere_classes(R(3), 5, 400, 16, 0.3), 5, "pml"),
        # Tight groups, k above their number: empty clusters are split
        # (seed 7 was picked among 0–39 for having two splits). Exact
        # duplicate rows are avoided on purpose: after a split, a row equal
        # to the donor centroid is exactly equidistant from the two twins,
        # and faiss's BLAS rounding, not a rule, breaks that tie.
        ("jitter400x8k60", jittered(R(7), 40, 10, 8, 0.03), 60, "roth"),
        # pytorch-metric-learning v2.8.1's TestMutualInformation: two
        # Gaussian classes of 2000 rows in 32-D, the second shifted by 0.5
        # or 1; its default k-means is faiss.Kmeans(d, 2, niter=20), which
        # trains on 512 of the 4000 rows.
        ("pmlmutualinfo4000x32off0.5", two_gaussians(R(8), 2000, 32, 0.5), 2, "pml"),
        ("pmlmutualinfo4000x32off1", two_gaussians(R(9), 2000, 32, 1.0), 2, "pml"),
    ]
    for name, (x, lab), k, preset in specs:
        q = quantise(x)
        q.tofile(os.path.join(OUT, "faiss_kmeans", name + ".i16"))
        xf = (q.astype(np.float32) / np.float32(SCALE)).astype(np.float32)
        cases.append(run(name, xf, lab, k, preset))
        c = cases[-1]
        print(name, "nmi %.6f splits %d train %d" % (c["nmi"], c["splits"], c["train_points"]))
    with open(os.path.join(OUT, "faiss_kmeans_golden.json"), "w") as f:
        json.dump(dict(faiss=faiss.__version__, scale=SCALE, cases=cases), f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
