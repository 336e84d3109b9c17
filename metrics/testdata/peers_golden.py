#!/usr/bin/python3
"""Regenerates peers_golden.json: the values that pytorch-metric-learning v2.8.1
(commit 216a792c22b0154d3d3bf008a7317edc7d677e71) and Roth et al.'s
Revisiting_Deep_Metric_Learning_PyTorch (commit efddbf2) compute on small inputs, for
peers_golden_test.go. Only the peers' own functions compute the values; this script
builds their inputs and records what they return.

Usage (Debian python3-torch 1.13, python3-faiss 1.7.3, python3-sklearn 1.2.1,
python3-tqdm, python3-scipy):

    PML=/path/to/pytorch-metric-learning ROTH=/path/to/Revisiting_Deep_Metric_Learning_PyTorch \\
        /usr/bin/python3 peers_golden.py

Inputs are regenerated in Go from the same SplitMix64 streams (peerData in
peers_golden_test.go): integer coordinates make every squared distance an exact integer
in float32, so both sides rank alike; ties are broken by the lower reference index.
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.environ["PML"], "src"))
sys.path.insert(0, os.environ["ROTH"])

from pytorch_metric_learning.utils import accuracy_calculator as pml_ac  # noqa: E402
from pytorch_metric_learning.utils.inference import return_results  # noqa: E402

MASK = (1 << 64) - 1


def splitmix64(seed):
    """SplitMix64 (Steele et al. 2014): the stream peerData reproduces in Go."""
    state = seed & MASK
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def peer_data(seed, n, dim, classes, span):
    """n rows of integer coordinates in [-span, span] and labels in [0, classes)."""
    g = splitmix64(seed)
    x = np.empty((n, dim), dtype=np.float32)
    for i in range(n):
        for j in range(dim):
            x[i, j] = float(int(next(g) % (2 * span + 1)) - span)
    y = np.array([int(next(g) % classes) for _ in range(n)], dtype=np.int64)
    return x, y


class StableKNN:
    """A PML knn_func: exact float64 squared distances, ties to the lower reference index,
    then PML's own return_results removes each query's own row when the reference includes
    the queries."""

    def __call__(self, query, k, reference, ref_includes_query=False):
        if ref_includes_query:
            k = k + 1
        q = query.double().numpy()
        r = reference.double().numpy()
        d = ((q[:, None, :] - r[None, :, :]) ** 2).sum(-1)
        idx = np.argsort(d, axis=1, kind="stable")[:, :k]
        D = torch.from_numpy(np.take_along_axis(d, idx, 1))
        I = torch.from_numpy(idx)
        return return_results(D, I, ref_includes_query)


def tolist(v):
    if isinstance(v, list):
        return [None if np.isnan(a) else float(a) for a in v]
    return None if np.isnan(v) else float(v)


def pml_hand_table():
    """tests/utils/test_calculate_accuracies.py, test_accuracy_calculator: the two
    neighbour-label tables run through AccuracyCalculator._get_accuracy."""
    query_labels = torch.tensor([1, 1, 2, 3, 4, 0])
    knn1 = torch.tensor([[0, 1, 1, 2, 2], [1, 0, 1, 1, 3], [4, 4, 4, 4, 2],
                         [3, 1, 3, 1, 3], [0, 0, 4, 2, 2], [1, 2, 3, 4, 5]])
    counts1 = ([0, 1, 2, 3, 4], [2, 3, 5, 4, 5])
    knn2 = knn1 + 5
    counts2 = ([5, 6, 7, 8, 9], [2, 3, 5, 4, 5])
    out = []
    for avg_of_avgs, per_class in [(False, False), (True, False), (False, True)]:
        ac = pml_ac.AccuracyCalculator(exclude=("NMI", "AMI"), avg_of_avgs=avg_of_avgs,
                                       return_per_class=per_class, device=torch.device("cpu"))
        for table, (knn, counts) in enumerate([(knn1, counts1), (knn2, counts2)]):
            for ref_includes_query in [False, True]:
                kw = {"query_labels": query_labels, "label_counts": counts,
                      "knn_labels": knn[:, 1:] if ref_includes_query else knn,
                      "ref_includes_query": ref_includes_query,
                      "not_lone_query_mask": torch.ones(6, dtype=torch.bool) if table == 0
                      else torch.zeros(6, dtype=torch.bool)}
                acc = ac._get_accuracy(ac.get_function_dict(), **kw)
                out.append({"table": table, "ref_includes_query": ref_includes_query,
                            "avg_of_avgs": avg_of_avgs, "return_per_class": per_class,
                            "values": {k: tolist(v) for k, v in acc.items()}})
    return out


PML_KNN_METRICS = ("precision_at_1", "r_precision", "mean_average_precision_at_r",
                   "mean_average_precision", "mean_reciprocal_rank")


def pml_random():
    """AccuracyCalculator.get_accuracy on seeded integer data, as PML's
    test_custom_knn and test_accuracy_calculator_large_k vary it: N, classes, k (None, ints,
    "max_bin_count"), ref_includes_query, avg_of_avgs, and a query subset (query =
    reference[:nq] with ref_includes_query)."""
    out = []
    seed = 100
    for n, dim, classes, span in [(200, 8, 10, 2), (200, 8, 103, 2), (1000, 6, 10, 3),
                                  (1000, 6, 2, 3), (600, 4, 11, 40)]:
        seed += 1
        x, y = peer_data(seed, n, dim, classes, span)
        for mode in ["separate", "ref_includes_query", "query_subset"]:
            for k in [None, 1, 2, 10, 98, "max_bin_count"]:
                for avg in [False, True]:
                    ac = pml_ac.AccuracyCalculator(include=PML_KNN_METRICS, k=k, avg_of_avgs=avg,
                                                   knn_func=StableKNN(), device=torch.device("cpu"))
                    if mode == "separate":
                        acc = ac.get_accuracy(x, y, x, y, False)
                        nq = n
                    elif mode == "ref_includes_query":
                        acc = ac.get_accuracy(x, y)
                        nq = n
                    else:
                        nq = n // 3
                        acc = ac.get_accuracy(x[:nq], y[:nq], x, y, True)
                    out.append({"seed": seed, "n": n, "dim": dim, "classes": classes, "span": span,
                                "mode": mode, "queries": nq,
                                "k": 0 if k is None else (-1 if k == "max_bin_count" else k),
                                "avg_of_avgs": avg, "values": {m: tolist(v) for m, v in acc.items()}})
    return out


def pml_map1000():
    """PML's mean_average_precision with k = min(1000, reference size): dmlbench's pml
    mAP@1000. N = 2100 in two classes puts R_q above 1000."""
    out = []
    for seed, n, dim, classes, span in [(301, 2100, 6, 2, 3), (302, 1500, 5, 7, 3), (303, 400, 5, 5, 3)]:
        x, y = peer_data(seed, n, dim, classes, span)
        for mode in ["separate", "ref_includes_query"]:
            gallery = n if mode == "separate" else n - 1
            ac = pml_ac.AccuracyCalculator(include=("mean_average_precision",), k=min(1000, gallery),
                                           knn_func=StableKNN(), device=torch.device("cpu"))
            acc = ac.get_accuracy(x, y, x, y, False) if mode == "separate" else ac.get_accuracy(x, y)
            out.append({"seed": seed, "n": n, "dim": dim, "classes": classes, "span": span,
                        "mode": mode, "value": acc["mean_average_precision"]})
    return out


def blobs(seed, n, dim, classes, spread):
    """Float rows c_y + u: integer class centres, u with 24 fractional bits (exact in
    float32 and float64 alike), labels y = i mod classes."""
    g = splitmix64(seed)
    centres = np.array([[float(int(next(g) % 9) - 4) for _ in range(dim)] for _ in range(classes)])
    x = np.empty((n, dim), dtype=np.float32)
    y = np.array([i % classes for i in range(n)], dtype=np.int64)
    for i in range(n):
        for j in range(dim):
            u = (next(g) >> 40) / float(1 << 24) - 0.5
            x[i, j] = np.float32(centres[y[i], j] + spread * u)
    return x, y


def pml_clustering():
    """AccuracyCalculator's NMI and AMI (FaissKMeans(niter=20), scikit-learn scores)."""
    out = []
    # 403: 700 rows in 2 clusters, more than faiss.Kmeans's 256 points per centroid: it trains
    # on a subsample.
    for seed, n, dim, classes, spread in [(401, 300, 4, 6, 4.0), (402, 500, 8, 12, 6.0), (403, 700, 4, 2, 7.0)]:
        x, y = blobs(seed, n, dim, classes, spread)
        ac = pml_ac.AccuracyCalculator(include=("NMI", "AMI"), device=torch.device("cpu"))
        acc = ac.get_accuracy(x, y)
        out.append({"seed": seed, "n": n, "dim": dim, "classes": classes, "spread": spread,
                    "values": {k: float(v) for k, v in acc.items()}})
    return out


class Rows(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y
        self.image_list = [("row%d" % i, int(v)) for i, v in enumerate(y)]
        self.image_paths = self.image_list

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return int(self.y[i]), torch.from_numpy(self.x[i])


class Identity(torch.nn.Module):
    def forward(self, x):
        return x


class Opt:
    def __init__(self, n_classes, dim):
        self.n_classes = n_classes
        self.kernels = 1
        self.evaluate_on_gpu = False
        self.rho_spectrum_embed_dim = dim


ROTH_METRICS = ["e_recall@1", "e_recall@2", "e_recall@4", "e_recall@8", "nmi", "f1", "mAP_c",
                "mAP_1000", "dists@intra_over_inter", "rho_spectrum@1"]


def roth_case(x, y, metrics=ROTH_METRICS):
    """MetricComputer.compute_standard (metrics/__init__.py) on the rows x, labels y: the
    dataloader yields them in order, the model is the identity, n_classes = the classes of y."""
    import metrics as roth_metrics
    dl = torch.utils.data.DataLoader(Rows(x, y), batch_size=64, shuffle=False)
    mc = roth_metrics.MetricComputer(metrics, Opt(len(np.unique(y)), x.shape[1]))
    computed, _ = mc.compute_standard(Opt(len(np.unique(y)), x.shape[1]), Identity(), dl,
                                      ["discriminative"], torch.device("cpu"))
    # Non-finite values (dists.py with singleton classes) are recorded as null.
    return {k: float(v) if np.isfinite(v) else None for k, v in computed["discriminative"].items()}


def tied_pairs(x, y):
    """Pairs of rows at one distance from some query whose labels differ: their order in
    faiss's search decides the metrics (recorded to show the cases exercise ties)."""
    d = ((x[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1)
    n = 0
    for q in range(len(x)):
        order = np.argsort(d[q], kind="stable")
        s = d[q][order]
        same = np.nonzero(np.diff(s) == 0)[0]
        n += int(np.sum(y[order[same]] != y[order[same + 1]]))
    return n


def roth():
    """Roth et al.'s metrics on seeded rows. Integer coordinates: squared distances are exact
    in float32, so faiss's order is the exact order, ties included (faiss 1.7.3 ranks tied
    rows by index)."""
    out = []
    for seed, n, dim, classes, span in [(501, 200, 8, 10, 500), (502, 300, 8, 40, 500),
                                        (503, 1100, 8, 30, 500), (504, 150, 8, 120, 500)]:
        x, y = peer_data(seed, n, dim, classes, span)
        metrics = ROTH_METRICS if classes < 100 else [m for m in ROTH_METRICS if m not in ("nmi", "f1")]
        out.append({"kind": "ints", "seed": seed, "n": n, "dim": dim, "classes": classes, "span": span,
                    "tied_label_pairs": tied_pairs(x, y), "values": roth_case(x, y, metrics)})
    for seed, n, dim, classes, spread in [(601, 300, 4, 6, 4.0), (602, 500, 8, 12, 6.0)]:
        x, y = blobs(seed, n, dim, classes, spread)
        out.append({"kind": "blobs", "seed": seed, "n": n, "dim": dim, "classes": classes, "spread": spread,
                    "values": roth_case(x, y, ["nmi", "f1", "dists@intra_over_inter", "rho_spectrum@1"])})
    # Duplicate rows with different labels (rows 0..3 at one point): column 0 of faiss's
    # search is dropped by position, whichever tied row it is.
    x, y = peer_data(701, 60, 4, 5, 500)
    x[1] = x[0]
    x[2] = x[0]
    x[3] = x[0]
    y[0], y[1], y[2], y[3] = 0, 1, 0, 2
    out.append({"kind": "duplicates", "seed": 701, "n": 60, "dim": 4, "classes": 5, "span": 500,
                "duplicate_of_row0": [1, 2, 3], "labels0_3": [0, 1, 0, 2],
                "values": roth_case(x, y, ["e_recall@1", "e_recall@2", "mAP_c", "mAP_1000"])})
    return out


if __name__ == "__main__":
    res = {"source": {"pml": "pytorch-metric-learning v2.8.1 (216a792), src/pytorch_metric_learning/utils/accuracy_calculator.py",
                      "roth": "Revisiting_Deep_Metric_Learning_PyTorch efddbf2, metrics/__init__.py MetricComputer.compute_standard and metrics/*.py",
                      "versions": {"torch": torch.__version__, "numpy": np.__version__}},
           "pml_hand_table": pml_hand_table(), "pml_random": pml_random(), "pml_map1000": pml_map1000(),
           "pml_clustering": pml_clustering(), "roth": roth()}
    import faiss
    import sklearn
    res["source"]["versions"].update({"faiss": faiss.__version__, "sklearn": sklearn.__version__})
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers_golden.json"), "w") as f:
        json.dump(res, f, indent=0)
