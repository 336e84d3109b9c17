#!/usr/bin/python3
"""Regenerate faiss_duplicates.json, which clustering's TestKMeansDuplicateTies reads.

Needs Debian's python3-faiss 1.7.3 and numpy, run with the system interpreter
from clustering/testdata (it reuses faiss_kmeans_gen.py's helpers):

    /usr/bin/python3 faiss_duplicates_gen.py

Data with exact duplicate rows: 400 distinct points in 40 classes (class
means on the unit sphere in 16-D plus 0.3·N(0, 1) noise), each repeated 10
times (4 000 rows, shuffled), quantised to multiples of 2^-12 as the other
goldens (faiss_kmeans/<name>.i16). faiss 1.7.3's Clustering runs with Roth
et al. 2020's preset (K = 40), then every row is assigned to its nearest
final centroid (IndexFlatL2, k = 1). Identical initial centroids leave a
cluster empty; faiss splits it into two twins perturbed symmetrically, and
every copy of the donor row is then exactly equidistant from both twins:
faiss's BLAS rounding decides where they go, the pure-Go k-means gives them
to the lower index. Recorded per case: faiss's per-iteration objective,
splits, final assignment and NMI against the class labels.
"""
import json
import os

import numpy as np

import faiss_kmeans_gen as g

OUT = os.path.dirname(os.path.abspath(__file__))


def duplicates(rs, classes=40, distinct=400, copies=10, d=16, spread=0.3):
    mu = rs.standard_normal((classes, d))
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    lab_d = np.repeat(np.arange(classes), distinct // classes)
    pts = mu[lab_d] + spread * rs.standard_normal((distinct, d))
    idx = np.repeat(np.arange(distinct), copies)
    p = rs.permutation(len(idx))
    return pts[idx][p], lab_d[idx][p]


def main():
    cases = []
    for seed in (0, 3, 4):
        name = "dup4000x16c40s%d" % seed
        x, lab = duplicates(np.random.RandomState(seed))
        q = g.quantise(x)
        q.tofile(os.path.join(OUT, "faiss_kmeans", name + ".i16"))
        xf = (q.astype(np.float32) / np.float32(g.SCALE)).astype(np.float32)
        c = g.run(name, xf, lab, 40, "roth")
        cases.append(c)
        print(name, "nmi %.6f splits %d" % (c["nmi"], c["splits"]))
    with open(os.path.join(OUT, "faiss_duplicates.json"), "w") as f:
        json.dump(dict(faiss=g.faiss.__version__, scale=g.SCALE, cases=cases), f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
