#!/usr/bin/python3
"""Regenerates sklearn_golden.json: NMI, AMI (arithmetic normalisation) and pair-counting F1 of
seeded random labelings, computed by scikit-learn (Debian python3-sklearn
1.2.1), for TestSklearnGolden. Usage: /usr/bin/python3 sklearn_golden.py"""
import json
import random

from sklearn.metrics import adjusted_mutual_info_score as ami
from sklearn.metrics import normalized_mutual_info_score as nmi
from sklearn.metrics.cluster import pair_confusion_matrix

def f1(y, z):
    """Pair-counting F1 = 2·TP / (2·TP + FP + FN) over unordered item pairs."""
    c = pair_confusion_matrix(y, z)
    return float(2 * c[1, 1] / (2 * c[1, 1] + c[1, 0] + c[0, 1]))


cases = []
rng = random.Random(20261123)
for n, c, k, noise in [(10, 3, 3, 0.3), (50, 5, 7, 0.5), (200, 20, 20, 0.2), (500, 100, 90, 0.6),
                       (1000, 7, 200, 0.1), (2000, 400, 400, 0.4), (300, 300, 10, 1.0), (64, 2, 64, 0.0)]:
    y = [rng.randrange(c) for _ in range(n)]
    z = [yi % k if rng.random() >= noise else rng.randrange(k) for yi in y]
    cases.append({"labels": y, "clusters": z,
                  "nmi": nmi(y, z, average_method="arithmetic"),
                  "ami": ami(y, z, average_method="arithmetic"),
                  "f1": f1(y, z)})
with open("sklearn_golden.json", "w") as f:
    json.dump({"source": "scikit-learn 1.2.1 normalized_mutual_info_score / adjusted_mutual_info_score (average_method=arithmetic), pair_confusion_matrix for F1",
               "cases": cases}, f)
