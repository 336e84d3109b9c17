"""pytorch-metric-learning 3's evaluation API on dmlbench's engine.

Follows ``pytorch_metric_learning.evaluation`` as its 3.0.1 documentation
describes it (release notes 3.0.0rc1–rc5, 3.0.0, migration guide): the
calculator lives here, custom metrics are ``custom_metrics={"name":
RetrievalMetric(function, neighbors=...)}`` whose function returns one
value per query (NaN where undefined), the calculator drops lone queries
and reduces, and NDCG with graded relevance is an opt-in metric
(``ndcg_metric``). PML 3's code could not be run here: where its
documentation is silent, docs/metrics.md says what this module does.

Built-in metrics are computed by ``dmlbench eval --compat pml3``; custom
metrics by this module from the exact k-NN of the embeddings (squared
Euclidean in float64, ties to the lower reference index).
"""

import dataclasses
import math

import numpy as np

from ._cli import DmlbenchError, embeddings_array, labels_array
from .pml import AccuracyCalculator as _V2Calculator
from .pml import CLUSTERING, PRIMARY_METRICS, _class_key

__all__ = ["AccuracyCalculator", "RetrievalMetric", "RetrievalInputs", "precision_at_k", "ndcg_metric"]


@dataclasses.dataclass(frozen=True)
class RetrievalInputs:
    """What a custom metric's function receives, for Q queries and k neighbours.

    query_labels (Q,), reference_labels (N,); knn_indices (Q, k) rows of the
    reference, nearest first, a query's own row excluded when
    ref_includes_query; knn_labels (Q, k) their labels; knn_distances
    (Q, k) their squared Euclidean distances; relevant_counts (Q,) the
    reference items sharing each query's label (its own row excluded);
    ref_includes_query as passed to get_accuracy.
    """

    query_labels: np.ndarray
    reference_labels: np.ndarray
    knn_indices: np.ndarray
    knn_labels: np.ndarray
    knn_distances: np.ndarray
    relevant_counts: np.ndarray
    ref_includes_query: bool

    @property
    def is_relevant(self):
        """(Q, k) booleans: neighbour j of query i shares its label."""
        return self.knn_labels == self.query_labels[:, None]


@dataclasses.dataclass(frozen=True)
class RetrievalMetric:
    """A custom metric: ``function(inputs: RetrievalInputs)`` returns one
    float per query (NaN where undefined).

    neighbors: how many neighbours the function sees (an int ≥ 1; None:
    the calculator's k, by default the whole reference). With
    exclude_lone_queries (the default) queries whose label has no other
    reference item are dropped before reducing; otherwise the function
    decides through NaN which queries count.
    """

    function: object
    neighbors: object = None
    exclude_lone_queries: bool = True

    def __post_init__(self):
        if not callable(self.function):
            raise TypeError(f"RetrievalMetric: function must be callable, got {type(self.function).__name__}")
        n = self.neighbors
        if n is not None and not (isinstance(n, int) and not isinstance(n, bool) and n > 0):
            raise ValueError(f"RetrievalMetric: neighbors must be a positive int or None, got {n!r}")


def precision_at_k(inputs, k):
    """Per-query precision among the first k neighbours, float64 (Q,)."""
    if not (isinstance(k, int) and k > 0):
        raise ValueError(f"precision_at_k: k must be a positive int, got {k!r}")
    if inputs.knn_labels.shape[1] < k:
        raise ValueError(f"precision_at_k: k = {k}, but the metric sees {inputs.knn_labels.shape[1]} neighbours")
    return inputs.is_relevant[:, :k].sum(axis=1).astype(np.float64) / k


def ndcg_metric(relevance, neighbors=None):
    """NDCG from a graded relevance function, as an opt-in custom metric.

    relevance(query_labels, reference_labels) receives a (Q, 1) and a
    (1, N) array and returns (Q, N) non-negative gains. A query's DCG is
    Σ_{i≤k} gain_i / log2(i + 1) over its first k neighbours; it is divided
    by the ideal DCG: the same sum over the whole reference's gains sorted
    in decreasing order (its own row excluded). A query whose ideal DCG is
    0 is NaN and does not count; lone queries are not dropped (a graded
    metric has its own rule for which queries count).
    """
    if not callable(relevance):
        raise TypeError("ndcg_metric: relevance must be callable")

    def ndcg(inputs):
        q = inputs.query_labels
        gains = np.asarray(relevance(q[:, None], inputs.reference_labels[None, :]), dtype=np.float64)
        if gains.shape != (len(q), len(inputs.reference_labels)):
            raise ValueError(f"ndcg_metric: relevance returned shape {gains.shape}, want {(len(q), len(inputs.reference_labels))}")
        if np.any(gains < 0) or not np.all(np.isfinite(gains)):
            raise ValueError("ndcg_metric: relevance must return finite gains ≥ 0")
        k = inputs.knn_indices.shape[1]
        discount = 1.0 / np.log2(np.arange(2, k + 2))
        got = np.take_along_axis(gains, inputs.knn_indices, axis=1)
        dcg = (got * discount).sum(axis=1)
        if inputs.ref_includes_query:
            gains[np.arange(len(q)), np.arange(len(q))] = -np.inf  # own row out of the ideal ranking
        ideal = -np.sort(-gains, axis=1)[:, :k]
        ideal[~np.isfinite(ideal)] = 0.0
        idcg = (ideal * discount[: ideal.shape[1]]).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), np.nan)

    return RetrievalMetric(ndcg, neighbors=neighbors, exclude_lone_queries=False)


def _knn(q, r, k, ref_includes_query):
    """Exact k nearest reference rows of each query (squared Euclidean,
    float64, ties to the lower index); a query's own row i is excluded when
    ref_includes_query."""
    q64, r64 = q.astype(np.float64), r.astype(np.float64)
    rn = (r64 * r64).sum(axis=1)
    idx = np.empty((len(q), k), dtype=np.int64)
    dist = np.empty((len(q), k), dtype=np.float64)
    step = max(1, (1 << 24) // max(1, len(r)))
    for a in range(0, len(q), step):
        b = min(len(q), a + step)
        d = np.maximum(rn[None, :] - 2 * q64[a:b] @ r64.T + (q64[a:b] * q64[a:b]).sum(axis=1)[:, None], 0.0)
        if ref_includes_query:
            d[np.arange(b - a), np.arange(a, b)] = np.inf
        order = np.argsort(d, axis=1, kind="stable")[:, :k]
        idx[a:b], dist[a:b] = order, np.take_along_axis(d, order, axis=1)
    return idx, dist


def _reduce(values, labels, keep, avg_of_avgs, return_per_class, classes):
    """Mean over the queries that count (kept and not NaN); per class on request."""
    counts = keep & ~np.isnan(values)
    if return_per_class:
        return [float(np.mean(values[counts & (labels == c)])) if np.any(counts & (labels == c)) else math.nan
                for c in classes]
    if not counts.any():
        return math.nan
    if avg_of_avgs:
        per = [np.mean(values[counts & (labels == c)]) for c in classes if np.any(counts & (labels == c))]
        return float(np.mean(per))
    return float(np.mean(values[counts]))


class AccuracyCalculator(_V2Calculator):
    """pytorch-metric-learning 3's AccuracyCalculator (as documented), computed by dmlbench.

    The v2 arguments keep their meaning (include, exclude, avg_of_avgs,
    return_per_class, k); custom_metrics maps names to RetrievalMetric and
    adds them to the result after the built-in metrics. Built-in metric
    values are dmlbench's under ``--compat pml3`` (docs/metrics.md lists
    every documented version 3 change and whether it alters a number).
    label_comparison_fn, knn_func and kmeans_func are refused as in the
    v2.8.1 drop-in.
    """

    convention = "pml3"

    def __init__(self, include=(), exclude=(), avg_of_avgs=False, return_per_class=False, k=None,
                 custom_metrics=None, label_comparison_fn=None, device=None, knn_func=None, kmeans_func=None):
        custom = dict(custom_metrics or {})
        for name, m in custom.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"custom_metrics: names must be non-empty strings, got {name!r}")
            if name in PRIMARY_METRICS:
                raise ValueError(f"custom_metrics: {name!r} is a built-in metric's name")
            if not isinstance(m, RetrievalMetric):
                raise TypeError(f"custom_metrics[{name!r}]: want a RetrievalMetric, got {type(m).__name__}")
        self.custom_metrics = custom
        known = set(PRIMARY_METRICS) | set(custom)
        for what, names in (("include", include), ("exclude", exclude)):
            if isinstance(names, (tuple, list)) and not set(names) <= known:
                raise ValueError(f"{what}: unknown metrics {sorted(set(names) - known)}; have {sorted(known)}")
        builtin = lambda names: tuple(n for n in names if n in PRIMARY_METRICS) if isinstance(names, (tuple, list)) else names
        only_custom = isinstance(include, (tuple, list)) and len(include) > 0 and not builtin(include)
        super().__init__(include=() if only_custom else builtin(include), exclude=builtin(exclude),
                         avg_of_avgs=avg_of_avgs, return_per_class=return_per_class, k=k,
                         label_comparison_fn=label_comparison_fn, device=device, knn_func=knn_func, kmeans_func=kmeans_func)
        self.include, self.exclude = tuple(include), tuple(exclude)

    def get_curr_metrics(self, include=(), exclude=()):
        names = list(PRIMARY_METRICS) + list(self.custom_metrics)
        base = [m for m in names if (not self.include or m in self.include) and m not in self.exclude]
        inc = include if len(include) else base
        return [m for m in base if m in inc and m not in exclude]

    def get_accuracy(self, query, query_labels, reference=None, reference_labels=None,
                     ref_includes_query=False, include=(), exclude=()):
        """A dict from metric name to value: built-in metrics in PML's order, then custom ones."""
        wanted = self.get_curr_metrics(include, exclude)
        builtin = [m for m in wanted if m in PRIMARY_METRICS]
        custom = [m for m in wanted if m in self.custom_metrics]
        out = {}
        if builtin:
            out.update(super().get_accuracy(query, query_labels, reference, reference_labels,
                                            ref_includes_query, include=tuple(builtin)))
        if custom:
            out.update(self._custom(custom, query, query_labels, reference, reference_labels, ref_includes_query))
        return {m: out[m] for m in wanted}

    def _custom(self, names, query, query_labels, reference, reference_labels, ref_includes_query):
        q = embeddings_array(query, "query")
        qy = labels_array(query_labels, "query_labels")
        if reference is None:
            r, ry, ref_includes_query = q, qy, True
        else:
            r = embeddings_array(reference, "reference")
            ry = labels_array(reference_labels, "reference_labels")
        if len(q) != len(qy) or len(r) != len(ry):
            raise ValueError("embeddings and labels must have the same length")
        if q.shape[1] != r.shape[1]:
            raise DmlbenchError(f"query has {q.shape[1]} columns, reference {r.shape[1]}")
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(r))):
            raise DmlbenchError("query/reference: embeddings must be finite")
        if ref_includes_query and (len(q) > len(r) or not (np.array_equal(q, r[:len(q)]) and np.array_equal(qy, ry[:len(q)]))):
            raise ValueError("When ref_includes_query is True, the first len(query) elements of reference must be "
                             "equal to query, and likewise for the labels.")
        gallery = len(r) - (1 if ref_includes_query else 0)
        default_k = self._default_k(qy, ry, ref_includes_query, gallery)
        want = [self.custom_metrics[n].neighbors or default_k for n in names]
        kmax = min(max(want), gallery)
        if kmax < 1:
            raise DmlbenchError("reference: no item to search")
        idx, dist = _knn(q, r, kmax, ref_includes_query)
        relevant = self._relevant_counts(qy, ry, ref_includes_query)
        classes = sorted(np.unique(qy).tolist(), key=lambda c: _class_key(str(c)))
        out = {}
        for name, k in zip(names, want):
            k = min(k, gallery)
            inputs = RetrievalInputs(query_labels=qy, reference_labels=ry, knn_indices=idx[:, :k], knn_labels=ry[idx[:, :k]],
                                     knn_distances=dist[:, :k], relevant_counts=relevant, ref_includes_query=bool(ref_includes_query))
            m = self.custom_metrics[name]
            v = np.asarray(m.function(inputs), dtype=np.float64).reshape(-1)
            if len(v) != len(q):
                raise ValueError(f"custom metric {name!r}: returned {len(v)} values for {len(q)} queries (want one per query)")
            keep = relevant > 0 if m.exclude_lone_queries else np.ones(len(q), dtype=bool)
            out[name] = _reduce(v, qy, keep, self.avg_of_avgs, self.return_per_class, classes)
        return out

    def _default_k(self, qy, ry, ref_includes_query, gallery):
        if self.k is None:
            return gallery
        if self.k == "max_bin_count":
            _, counts = np.unique(ry, return_counts=True)
            return max(1, int(counts.max()) - (1 if ref_includes_query else 0))
        return self.k

    @staticmethod
    def _relevant_counts(qy, ry, ref_includes_query):
        labels, counts = np.unique(ry, return_counts=True)
        pos = np.minimum(np.searchsorted(labels, qy), len(labels) - 1)
        return np.where(labels[pos] == qy, counts[pos], 0) - (1 if ref_includes_query else 0)

    def requires_clustering(self):
        return list(CLUSTERING)
