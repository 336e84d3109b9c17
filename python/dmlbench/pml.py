"""AccuracyCalculator: pytorch-metric-learning's interface on dmlbench's engine.

A drop-in for ``pytorch_metric_learning.utils.accuracy_calculator.
AccuracyCalculator`` (v2.8.1; Musgrave, Belongie & Lim 2020): the same
constructor, ``get_accuracy`` signature, metric names and conventions
(``dmlbench eval --compat pml``). Switch by changing one import::

    from dmlbench import AccuracyCalculator
"""

import logging
import math

import numpy as np

from ._argnames import argument_names
from ._cli import Scratch, class_ids, embeddings_array, labels_array, name_classes, run_json

# PML logs through the logger named "PML" (common_functions.LOGGER); the
# same name keeps a user's logging configuration working after the switch.
LOGGER = logging.getLogger("PML")

# PML's metric name → dmlbench's under --compat pml (docs/metrics.md).
PML_TO_DMLBENCH = {
    "AMI": "AMI",
    "NMI": "NMI",
    "mean_average_precision": "mean_average_precision",
    "mean_average_precision_at_r": "MAP@R",
    "mean_reciprocal_rank": "MRR",
    "precision_at_1": "R@1",
    "r_precision": "R-Precision",
}

# In PML's order: its function dict follows dir(), which sorts the names.
PRIMARY_METRICS = sorted(PML_TO_DMLBENCH)
CLUSTERING = ("AMI", "NMI")
# Metrics whose value is wrong when k is below the largest class (PML's
# determine_k warning).
NEEDS_WHOLE_CLASS = ("mean_average_precision_at_r", "r_precision")


def _custom_metric_names(obj):
    """Metrics a subclass adds or overrides the way PML 2 discovers them
    (calculate_*); this class defines none, so every one is the user's."""
    return sorted(n[len("calculate_"):] for n in dir(obj) if n.startswith("calculate_"))


def _nan(v):
    return float("nan") if v is None else float(v)


def _class_key(name):
    # PML lists classes by sorted label value; labels are numbers there.
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)


class AccuracyCalculator:
    """pytorch-metric-learning's AccuracyCalculator, computed by dmlbench.

    include, exclude: PML metric names (precision_at_1, r_precision,
    mean_average_precision_at_r, mean_average_precision,
    mean_reciprocal_rank, NMI, AMI); avg_of_avgs: the mean over classes of
    each class's mean; return_per_class: a list per k-NN metric, one value
    per query class in sorted label order; k: None (the whole reference),
    "max_bin_count" or a positive int (PML's explicit k). PML's
    label_comparison_fn, knn_func and kmeans_func have no counterpart and
    are refused; device is accepted and ignored (the binary runs on the
    host, or on its own GPU backend). A subclass's own ``calculate_*``
    metric is refused, naming the per-query form that
    ``dmlbench.evaluation.AccuracyCalculator(custom_metrics=...)`` takes.
    PML's two warnings (k below the largest class with MAP@R or
    R-Precision; no query label in the reference) are logged to the
    "PML" logger, as PML logs them.
    """

    convention = "pml"

    def __init__(self, include=(), exclude=(), avg_of_avgs=False, return_per_class=False,
                 k=None, label_comparison_fn=None, device=None, knn_func=None, kmeans_func=None):
        for name, v in (("label_comparison_fn", label_comparison_fn), ("knn_func", knn_func),
                        ("kmeans_func", kmeans_func)):
            if v is not None:
                raise NotImplementedError(f"{name}: not supported by dmlbench (labels are compared by equality; "
                                          "k-NN and k-means are dmlbench's)")
        custom = _custom_metric_names(self)
        if custom:
            name = custom[0]
            raise NotImplementedError(
                f"calculate_{name}: dmlbench's v2.8.1 drop-in computes PML's built-in metrics only; write it as a "
                f"per-query function for dmlbench.evaluation.AccuracyCalculator(custom_metrics={{'{name}': "
                f"RetrievalMetric(function, neighbors=...)}}) (pytorch-metric-learning 3's form; docs/metrics.md)")
        self.check_primary_metrics(include, exclude)
        self.include, self.exclude = tuple(include), tuple(exclude)
        if avg_of_avgs and return_per_class:
            raise ValueError("avg_of_avgs and return_per_class are mutually exclusive")
        self.avg_of_avgs = avg_of_avgs
        self.return_per_class = return_per_class
        if (not (isinstance(k, int) and not isinstance(k, bool) and k > 0)) and (k not in [None, "max_bin_count"]):
            raise ValueError("k must be an integer greater than 0, or None, or 'max_bin_count'")
        self.k = k
        self.device = device

    @staticmethod
    def check_primary_metrics(include=(), exclude=()):
        for met in (include, exclude):
            if not isinstance(met, (tuple, list)):
                raise TypeError(f"Arguments must be of type tuple, not {type(met)}.")
            if not set(met).issubset(PRIMARY_METRICS):
                raise ValueError(f"Primary metrics must be one or more of: {PRIMARY_METRICS}.")

    def get_curr_metrics(self, include=(), exclude=()):
        """The metric names a call with include/exclude computes, in PML's order."""
        base = [m for m in PRIMARY_METRICS if (not self.include or m in self.include) and m not in self.exclude]
        inc = include if len(include) else base
        return [m for m in base if m in inc and m not in exclude]

    def requires_clustering(self):
        return list(CLUSTERING)

    def requires_knn(self):
        return ["precision_at_1", "mean_average_precision", "mean_average_precision_at_r",
                "mean_reciprocal_rank", "r_precision"]

    def description(self):
        return "avg_of_avgs" if self.avg_of_avgs else ""

    def get_accuracy(self, query, query_labels, reference=None, reference_labels=None,
                     ref_includes_query=False, include=(), exclude=()):
        """PML's get_accuracy: a dict from metric name to value (or list per class)."""
        if reference is None:
            reference, reference_labels, ref_includes_query = query, query_labels, True
            same = True
        else:
            same = False
        q = embeddings_array(query, "query")
        qy = labels_array(query_labels, "query_labels")
        r = q if same else embeddings_array(reference, "reference")
        ry = qy if same else labels_array(reference_labels, "reference_labels")
        if len(q) != len(qy) or len(r) != len(ry):
            raise ValueError("embeddings and labels must have the same length")
        if ref_includes_query and not same:
            nq = len(q)
            if nq > len(r) or not (np.allclose(q, r[:nq]) and np.array_equal(qy, ry[:nq])):
                raise ValueError(
                    "When ref_includes_query is True, the first len(query) elements of reference must be equal to query.\n"
                    "Likewise, the first len(query_labels) elements of reference_labels must be equal to query_labels.\n")
        if same:
            (qy,), names = class_ids(("query_labels", qy))
            ry = qy
        else:
            (qy, ry), names = class_ids(("query_labels", qy), ("reference_labels", ry))
        wanted = self.get_curr_metrics(include, exclude)
        if not wanted:
            return {}
        knn = [m for m in wanted if m not in CLUSTERING]
        clus = [m for m in wanted if m in CLUSTERING]
        if knn:
            self._log_warnings(qy, ry, ref_includes_query, wanted)
        out = {}
        with Scratch() as s, argument_names(s, {"query_rows": "query"}):
            qe, ql = s.emb("query", q), s.labels("query_labels", qy)
            if knn:
                args = ["eval", "--compat", self.convention, "--metrics", ",".join(PML_TO_DMLBENCH[m] for m in knn)]
                if same:
                    args += ["--emb", qe, "--labels", ql]
                elif ref_includes_query:
                    args += ["--emb", s.emb("reference", r), "--labels", s.labels("reference_labels", ry),
                             "--query-rows", s.rows("query_rows", np.arange(len(q)))]
                else:
                    args += ["--query-emb", qe, "--query-labels", ql,
                             "--gallery-emb", s.emb("reference", r), "--gallery-labels", s.labels("reference_labels", ry)]
                if self.avg_of_avgs:
                    args += ["--average", "per-class"]
                if self.return_per_class:
                    args.append("--per-class")
                if self.k is not None:
                    args += ["--pml-k", str(self.k)]
                res = name_classes(run_json(args), names)
                self._knn_values(res, knn, out)
            if clus:
                # PML clusters the query set into as many clusters as it has labels.
                res = run_json(["eval", "--compat", self.convention, "--metrics", ",".join(clus), "--emb", qe, "--labels", ql])
                for m in clus:
                    out[m] = _nan(res["metrics"].get(m))
        return {m: out[m] for m in wanted}

    def _log_warnings(self, qy, ry, ref_includes_query, wanted):
        """PML's determine_k and lone-label warnings, worded as PML words them."""
        labels = np.unique(qy)
        ref_labels, ref_counts = np.unique(ry, return_counts=True)
        pos = np.searchsorted(ref_labels, labels)
        pos = np.minimum(pos, len(ref_labels) - 1)
        counts = np.where(ref_labels[pos] == labels, ref_counts[pos], 0)
        lone = counts - (1 if ref_includes_query else 0) <= 0
        if lone.all():
            LOGGER.warning("None of the query labels are in the reference set.")
        max_bin_count = int(counts.max())
        if isinstance(self.k, int) and self.k < max_bin_count:
            hit = {m for m in wanted if m in NEEDS_WHOLE_CLASS}
            if hit:
                LOGGER.warning(
                    f"\nWarning: You are computing {hit}, but the value for k ({self.k})"
                    f" is less than the max bin count ({max_bin_count}) so the values for these metrics will be incorrect."
                    " To fix this, set k='max_bin_count'."
                    f"\nIf you're looking for MAP@{self.k} instead of MAP@R, then you should use 'mean_average_precision'"
                    " rather than mean_average_precision_at_r")

    def _knn_values(self, res, knn, out):
        if not self.return_per_class:
            for m in knn:
                out[m] = _nan(res["metrics"].get(PML_TO_DMLBENCH[m]))
            return
        classes = sorted(res.get("per_class") or [], key=lambda c: _class_key(c["class"]))
        for m in knn:
            key = PML_TO_DMLBENCH[m]
            vals = [float(c["metrics"][key]) for c in classes if key in c["metrics"]]
            if not vals:
                # PML: NaN for each class of the reference when no query has a match.
                vals = [math.nan] * max(1, len(classes))
            out[m] = vals
