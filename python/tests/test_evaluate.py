import json
import os
import subprocess
import unittest
import warnings

import numpy as np

import dmlbench
from helpers import HAVE_TORCH, ROOT, need_binary

FEATURES = os.path.join(ROOT, "docs", "examples", "features")
QG = os.path.join(ROOT, "docs", "examples", "query-gallery")


def cli(*args):
    out = subprocess.run([dmlbench.find_binary(), "eval", *args, "--format", "json", "--quiet"],
                         check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


@need_binary
class TestEvaluate(unittest.TestCase):
    def setUp(self):
        self.x = np.load(os.path.join(FEATURES, "test_emb.npy"))
        self.y = np.load(os.path.join(FEATURES, "test_labels.npy"))

    def test_same_numbers_as_cli(self):
        for compat in ("strict", "roth", "pml"):
            got = dmlbench.evaluate(self.x, self.y, compat=compat, warn=False)
            want = cli("--emb", os.path.join(FEATURES, "test_emb.npy"),
                       "--labels", os.path.join(FEATURES, "test_labels.npy"), "--compat", compat)
            self.assertEqual(got["metrics"], want["metrics"], compat)
            self.assertEqual((got["n"], got["queries"], got["gallery"]), (want["n"], want["queries"], want["gallery"]))

    def test_float64_and_int32_inputs(self):
        a = dmlbench.evaluate(self.x, self.y, metrics=["R@1", "MAP@R"])
        b = dmlbench.evaluate(self.x.astype(np.float64), self.y.astype(np.int32), metrics="R@1,MAP@R")
        self.assertEqual(a["metrics"], b["metrics"])
        self.assertEqual(sorted(a["metrics"]), ["MAP@R", "R@1"])

    def test_options_reach_the_binary(self):
        r = dmlbench.evaluate(self.x, self.y, metrics=["R@k"], k=[1, 3], distance="cosine")
        self.assertEqual(sorted(r["metrics"]), ["R@1", "R@3"])
        want = cli("--emb", os.path.join(FEATURES, "test_emb.npy"), "--labels", os.path.join(FEATURES, "test_labels.npy"),
                   "--metrics", "R@k", "--k", "1,3", "--distance", "cosine")
        self.assertEqual(r["metrics"], want["metrics"])

    def test_query_gallery_and_per_class(self):
        q, qy = np.load(os.path.join(QG, "query_emb.npy")), np.load(os.path.join(QG, "query_labels.npy"))
        g, gy = np.load(os.path.join(QG, "gallery_emb.npy")), np.load(os.path.join(QG, "gallery_labels.npy"))
        r = dmlbench.evaluate(q, qy, gallery=g, gallery_labels=gy, metrics=["R@1", "MAP@R"])
        want = cli("--query-emb", os.path.join(QG, "query_emb.npy"), "--query-labels", os.path.join(QG, "query_labels.npy"),
                   "--gallery-emb", os.path.join(QG, "gallery_emb.npy"), "--gallery-labels", os.path.join(QG, "gallery_labels.npy"),
                   "--metrics", "R@1,MAP@R")
        self.assertEqual(r["metrics"], want["metrics"])
        self.assertEqual(r["gallery"], len(g))
        rows = np.load(os.path.join(QG, "query_rows.npy"))
        r = dmlbench.evaluate(g, gy, query_rows=rows, compat="pml", average="per-class", per_class=True, warn=False)
        want = cli("--emb", os.path.join(QG, "gallery_emb.npy"), "--labels", os.path.join(QG, "gallery_labels.npy"),
                   "--query-rows", os.path.join(QG, "query_rows.npy"), "--compat", "pml", "--average", "per-class", "--per-class")
        self.assertEqual(r["metrics"], want["metrics"])
        self.assertEqual(r["per_class"], want["per_class"])

    def test_string_labels(self):
        names = np.array([f"class-{v}" for v in self.y])
        a = dmlbench.evaluate(self.x, self.y, metrics=["R@1", "MAP@R"])
        b = dmlbench.evaluate(self.x, names, metrics=["R@1", "MAP@R"])
        self.assertEqual(a["metrics"], b["metrics"])

    def test_undefined_mean_is_none(self):
        # every query alone in its class: MAP@R is a mean over no query
        r = dmlbench.evaluate(np.eye(4, dtype=np.float32), [0, 1, 2, 3], metrics=["MAP@R"], warn=False)
        self.assertIsNone(r["metrics"]["MAP@R"])

    def test_warnings_are_issued(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dmlbench.evaluate(self.x, self.y, metrics=["NMI"], compat="pml")
        self.assertTrue(any(issubclass(x.category, dmlbench.DmlbenchWarning) for x in w))

    def test_bad_input_raises_cli_message(self):
        with self.assertRaises(dmlbench.DmlbenchError) as cm:
            dmlbench.evaluate(self.x, self.y[:-1])
        self.assertEqual(len(cm.exception.message.splitlines()), 1)
        self.assertIn("labels", cm.exception.message)
        self.assertNotEqual(cm.exception.returncode, 0)
        with self.assertRaises(dmlbench.DmlbenchError) as cm:
            dmlbench.evaluate(self.x, self.y, metrics=["foo"])
        self.assertIn("unknown metric", cm.exception.message)
        bad = self.x.copy()
        bad[3, 2] = np.nan
        with self.assertRaises(dmlbench.DmlbenchError) as cm:
            dmlbench.evaluate(bad, self.y)
        self.assertIn("NaN", cm.exception.message)
        with self.assertRaises(dmlbench.DmlbenchError):
            dmlbench.evaluate(np.zeros((2, 3, 4)), [0, 1])
        with self.assertRaises(dmlbench.DmlbenchError):
            dmlbench.evaluate(self.x, self.y, compat="sklearn")
        with self.assertRaises(dmlbench.DmlbenchError):
            dmlbench.evaluate(self.x, self.y, gallery=self.x)

    def test_binary_not_found(self):
        old = os.environ.get("DMLBENCH_BIN")
        os.environ["DMLBENCH_BIN"] = "/nonexistent/dmlbench"
        try:
            with self.assertRaises(dmlbench.BinaryNotFoundError) as cm:
                dmlbench.evaluate(self.x, self.y)
            self.assertIn("DMLBENCH_BIN", str(cm.exception))
        finally:
            if old is None:
                del os.environ["DMLBENCH_BIN"]
            else:
                os.environ["DMLBENCH_BIN"] = old

    @unittest.skipUnless(HAVE_TORCH, "torch not installed")
    def test_torch_tensors(self):
        import torch
        a = dmlbench.evaluate(self.x, self.y, metrics=["R@1", "MAP@R"])
        t = torch.from_numpy(self.x).requires_grad_(True) * 1.0
        b = dmlbench.evaluate(t, torch.from_numpy(self.y), metrics=["R@1", "MAP@R"])
        self.assertEqual(a["metrics"], b["metrics"])
        c = dmlbench.evaluate(torch.from_numpy(self.x).half(), torch.from_numpy(self.y), metrics=["R@1"])
        self.assertIn("R@1", c["metrics"])
        if torch.cuda.is_available():
            d = dmlbench.evaluate(torch.from_numpy(self.x).cuda(), torch.from_numpy(self.y).cuda(), metrics=["R@1", "MAP@R"])
            self.assertEqual(a["metrics"], d["metrics"])


if __name__ == "__main__":
    unittest.main()
