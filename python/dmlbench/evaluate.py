"""evaluate(): `dmlbench eval --format json` on in-memory arrays."""

import warnings

import numpy as np

from ._argnames import argument_names
from ._cli import DmlbenchError, Scratch, class_ids, embeddings_array, labels_array, name_classes, run_json


class DmlbenchWarning(UserWarning):
    """A warning of the binary (e.g. k-means with too few points per centroid)."""


def _opt(args, flag, value):
    if value is not None:
        args += [flag, str(value)]


def evaluate(embeddings, labels, *, gallery=None, gallery_labels=None, query_rows=None,
             compat="strict", metrics=None, k=None, distance=None, average=None,
             per_class=False, clusters=None, clustering=None, eps=None, min_samples=None,
             seed=None, binarize=False, pml_k=None, protocol=None, backend=None,
             threads=None, warn=True):
    """Scores embeddings as ``dmlbench eval --format json`` does and returns its JSON.

    embeddings, labels: the evaluated set (N×D, N), numpy arrays or torch
    tensors (any device); by default every row is a query against all others.
    gallery, gallery_labels: a separate gallery the rows of ``embeddings``
    search (In-Shop style; no self-exclusion).
    query_rows: rows of ``embeddings`` that are the queries; every row is the
    gallery, each query's own row excluded (PML's ref_includes_query).
    compat: "strict" | "roth" | "pml"; metrics: names (list or
    comma-separated string; None: all); k: recall ks (list or string).
    The other options are eval's flags of the same name (``dmlbench eval
    --help``); None leaves the binary's default.

    Returns the dict eval prints: result["metrics"] maps names to fractions
    (None where a mean over no query is undefined), and "per_class",
    "warnings", "n", "queries", "gallery" as eval writes them. Bad input
    raises DmlbenchError with the binary's one-line message; with warn, the
    binary's warnings are issued as DmlbenchWarning.
    """
    if (gallery is None) != (gallery_labels is None):
        raise DmlbenchError("give gallery and gallery_labels together")
    if gallery is not None and query_rows is not None:
        raise DmlbenchError("query_rows selects queries inside embeddings; with a gallery every row is a query")
    x = embeddings_array(embeddings, "embeddings")
    y = labels_array(labels, "labels")
    if gallery is None:
        (y,), names = class_ids(("labels", y))
    else:
        g = embeddings_array(gallery, "gallery")
        (y, gy), names = class_ids(("labels", y), ("gallery_labels", labels_array(gallery_labels, "gallery_labels")))
    args = ["eval"]
    argnames = {"emb": "embeddings", "query": "embeddings", "query_labels": "labels"}
    with Scratch() as s, argument_names(s, argnames):
        if gallery is None:
            args += ["--emb", s.emb("emb", x), "--labels", s.labels("labels", y)]
        else:
            args += ["--query-emb", s.emb("query", x), "--query-labels", s.labels("query_labels", y),
                     "--gallery-emb", s.emb("gallery", g), "--gallery-labels", s.labels("gallery_labels", gy)]
        if query_rows is not None:
            r = np.asarray(labels_array(query_rows, "query_rows"))
            if r.dtype.kind != "i":
                raise DmlbenchError("query_rows: want integer row numbers")
            args += ["--query-rows", s.rows("query_rows", r)]
        args += ["--compat", compat]
        if metrics is not None:
            args += ["--metrics", metrics if isinstance(metrics, str) else ",".join(metrics)]
        if k is not None:
            args += ["--k", k if isinstance(k, str) else ",".join(str(v) for v in np.atleast_1d(k))]
        for flag, v in (("--distance", distance), ("--average", average), ("--clusters", clusters),
                        ("--clustering", clustering), ("--eps", eps), ("--min-samples", min_samples),
                        ("--seed", seed), ("--pml-k", pml_k), ("--protocol", protocol),
                        ("--backend", backend), ("--threads", threads)):
            _opt(args, flag, v)
        if per_class:
            args.append("--per-class")
        if binarize:
            args.append("--binarize")
        res = name_classes(run_json(args), names)
    if warn:
        for w in res.get("warnings") or ():
            warnings.warn(w, DmlbenchWarning, stacklevel=2)
    return res
