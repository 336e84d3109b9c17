#!/usr/bin/python3
"""faiss IndexFlatL2 k-NN on an exported embedding file, for the timing
comparison in docs/performance.md.

usage: /usr/bin/python3 scripts/faiss-knn.py EMB.npy LABELS.npy K [THREADS]

Searches every row against all rows for K+1 neighbours (the row itself is
among them, as in Roth et al.'s evaluation code), drops each row's own
entry and prints R@1 of the remaining lists, so that a run can be checked
against `dmlbench eval --metrics R@1` on the same files. Needs Debian's
python3-faiss and python3-numpy.
"""
import sys

import faiss
import numpy as np


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[3])
    x = np.ascontiguousarray(np.load(sys.argv[1]), dtype=np.float32)
    y = np.load(sys.argv[2])
    k = int(sys.argv[3])
    if len(sys.argv) == 5:
        faiss.omp_set_num_threads(int(sys.argv[4]))
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    _, ids = index.search(x, k + 1)
    n = x.shape[0]
    own = ids == np.arange(n)[:, None]
    # first neighbour that is not the row itself
    first = np.where(own[:, 0], ids[:, 1], ids[:, 0])
    print("n %d k %d R@1 %.5f" % (n, k, float(np.mean(y[first] == y))))


if __name__ == "__main__":
    main()
