"""Writes the small query/gallery example files that `dmlbench eval --help` names.

20 Gaussian classes in 16-d (means uniform on the unit sphere, per-coordinate
sigma 0.3), 2 query and 4 gallery items per class, seed 0. Run with numpy:
    python3 docs/examples/query-gallery/make.py
"""
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(0)
classes, dim, nq, ng = 20, 16, 2, 4
means = rng.standard_normal((classes, dim))
means /= np.linalg.norm(means, axis=1, keepdims=True)


def draw(per_class):
    labels = np.repeat(np.arange(classes, dtype=np.int64), per_class)
    emb = means[labels] + 0.3 * rng.standard_normal((len(labels), dim))
    return emb.astype(np.float32), labels


q, ql = draw(nq)
g, gl = draw(ng)
np.save(os.path.join(here, "query_emb.npy"), q)
np.save(os.path.join(here, "query_labels.npy"), ql)
np.save(os.path.join(here, "gallery_emb.npy"), g)
np.save(os.path.join(here, "gallery_labels.npy"), gl)
np.savez(os.path.join(here, "gallery.npz"), embeddings=g, labels=gl)
with open(os.path.join(here, "gallery_names.txt"), "w") as f:
    f.writelines(f"class-{l:02d}\n" for l in gl)
# every fourth gallery row: the queries of `eval --query-rows`
np.save(os.path.join(here, "query_rows.npy"), np.arange(0, len(gl), 4, dtype=np.int64))

# docs/examples/features: a `dir:` data set (run --dataset dir:docs/examples/features):
# 40 more classes, 10 items each, the first 20 classes train, the last 20 test.
feat = os.path.join(here, "..", "features")
os.makedirs(feat, exist_ok=True)
fmeans = rng.standard_normal((40, dim))
fmeans /= np.linalg.norm(fmeans, axis=1, keepdims=True)
for split, cls in (("train", range(0, 20)), ("test", range(20, 40))):
    labels = np.repeat(np.array(list(cls), dtype=np.int64), 10)
    emb = (fmeans[labels] + 0.3 * rng.standard_normal((len(labels), dim))).astype(np.float32)
    np.save(os.path.join(feat, f"{split}_emb.npy"), emb)
    np.save(os.path.join(feat, f"{split}_labels.npy"), labels)
