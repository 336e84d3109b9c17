"""AccuracyCalculator against pytorch-metric-learning v2.8.1's own test values.

The cases are those of tests/utils/test_calculate_accuracies.py and
test_calculate_accuracies_large_k.py that metrics/pml_golden_test.go ports
(TestPMLFaissCases, TestPMLAvgOfAvgs, TestPMLExplicitKTruncation,
TestPMLLargeK, TestPMLAllTied), here through the Python interface.
"""

import math
import unittest

import numpy as np

from dmlbench import AccuracyCalculator
from helpers import HAVE_TORCH, need_binary


def arange(n, scale):
    return (np.arange(n, dtype=np.float32) * scale)[:, None]


def brute_force(x, labels, k, loo=True):
    """PML's large-k test definitions on an exact float64 ranking (ties: lower index)."""
    x = x.astype(np.float64)
    n = len(x)
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    p1 = m_ap = map_r = 0.0
    for q in range(n):
        order = np.argsort(d[q], kind="stable")
        if loo:
            order = order[order != q]
        rel = labels[order] == labels[q]
        all_rel = rel.sum()
        hits = np.cumsum(rel[:k])
        prec = hits / np.arange(1, k + 1)
        p1 += rel[0]
        if all_rel > 0:
            m_ap += (prec * rel[:k]).sum() / all_rel
            w = min(k, all_rel)
            map_r += (prec[:w] * rel[:w]).sum() / all_rel
    return p1 / n, m_ap / n, map_r / n


@need_binary
class TestAccuracyCalculator(unittest.TestCase):
    def assertNear(self, got, want, msg=None):
        self.assertTrue(math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{msg}: {got} != {want}")

    def test_faiss_cases(self):
        # query = reference = arange(10), labels arange(10), separate sets
        calc = AccuracyCalculator(include=("precision_at_1", "r_precision", "mean_average_precision_at_r"))
        a = calc.get_accuracy(arange(10, 1), np.arange(10), arange(10, 1), np.arange(10), False)
        self.assertEqual(a, {"mean_average_precision_at_r": 1.0, "precision_at_1": 1.0, "r_precision": 1.0})
        # reference arange(20)/2, even rows are the queries, odd rows label 1;
        # the queries are the reference's first rows in PML's v2 contract
        ref = arange(20, 0.5)
        ref_labels = np.ones(20, dtype=np.int64)
        ref_labels[0::2] = np.arange(10)
        order = np.r_[np.arange(0, 20, 2), np.arange(1, 20, 2)]
        ref, ref_labels = ref[order], ref_labels[order]
        a = calc.get_accuracy(ref[:10], ref_labels[:10], ref, ref_labels, True)
        self.assertNear(a["precision_at_1"], 1)
        self.assertNear(a["r_precision"], 0.5)
        self.assertNear(a["mean_average_precision_at_r"], (1 + 2 / 2 + 3 / 5 + 4 / 7 + 5 / 9) / 10)

    def test_avg_of_avgs(self):
        q = arange(10, 1)
        q[9] = 100
        g = arange(10, 1)
        g[0] = -100
        ql = np.array([0] * 9 + [1])
        gl = np.array([1] + [0] * 9)
        keys = ("precision_at_1", "r_precision", "mean_average_precision_at_r")
        a = AccuracyCalculator(include=keys).get_accuracy(q, ql, g, gl)
        for key in keys:
            self.assertNear(a[key], 0.9, key)
        a = AccuracyCalculator(include=keys, avg_of_avgs=True).get_accuracy(q, ql, g, gl)
        for key in keys:
            self.assertNear(a[key], 0.5, key)
        a = AccuracyCalculator(include=keys, return_per_class=True).get_accuracy(q, ql, g, gl)
        for key in keys:
            self.assertEqual(a[key], [1.0, 0.0], key)

    def test_explicit_k_truncation(self):
        # 1-D runs of 6: R = 5, window 3, divisor 5, so MAP@R ≤ 3/5
        x = arange(12, 1)
        y = np.array([0] * 6 + [1] * 6)
        calc = AccuracyCalculator(include=("mean_average_precision_at_r", "r_precision"), k=3)
        a = calc.get_accuracy(x, y)
        self.assertLessEqual(a["mean_average_precision_at_r"], 3 / 5 + 1e-12)
        full = AccuracyCalculator(include=("mean_average_precision_at_r",), k="max_bin_count").get_accuracy(x, y)
        self.assertGreater(full["mean_average_precision_at_r"], a["mean_average_precision_at_r"])

    def test_large_k(self):
        rng = np.random.default_rng(5)
        x = rng.random((1000, 5), dtype=np.float32)
        y = np.repeat(np.arange(100), 10)
        rng.shuffle(y)
        for k, kk in ((None, 999), ("max_bin_count", 9)):
            a = AccuracyCalculator(include=("precision_at_1", "mean_average_precision", "mean_average_precision_at_r"),
                                   k=k).get_accuracy(x, y)
            p1, m_ap, map_r = brute_force(x, y, kk)
            # PML's test: np.isclose (rtol 1e-5): float32 distances may order near-ties differently
            self.assertTrue(np.isclose(a["precision_at_1"], p1, rtol=1e-5), (k, a, p1))
            self.assertTrue(np.isclose(a["mean_average_precision"], m_ap, rtol=1e-5), (k, a, m_ap))
            self.assertTrue(np.isclose(a["mean_average_precision_at_r"], map_r, rtol=1e-5), (k, a, map_r))

    def test_all_tied(self):
        n = 600
        x = np.full((n, 4), 0.25, dtype=np.float32)
        y = (np.arange(n) * 7) % 13
        a = AccuracyCalculator(include=("precision_at_1", "mean_average_precision", "mean_average_precision_at_r",
                                        "mean_reciprocal_rank")).get_accuracy(x, y)
        p1, m_ap, map_r = brute_force(x, y, n - 1)
        mrr = 0.0
        for q in range(n):
            order = np.array([j for j in range(n) if j != q])
            mrr += 1 / (np.argmax(y[order] == y[q]) + 1)
        self.assertNear(a["precision_at_1"], p1)
        self.assertNear(a["mean_average_precision"], m_ap)
        self.assertNear(a["mean_average_precision_at_r"], map_r)
        self.assertNear(a["mean_reciprocal_rank"], mrr / n)

    def test_keys_and_order(self):
        x = np.random.default_rng(0).random((60, 4), dtype=np.float32)
        y = np.arange(60) % 6
        a = AccuracyCalculator().get_accuracy(x, y)
        self.assertEqual(list(a), ["AMI", "NMI", "mean_average_precision", "mean_average_precision_at_r",
                                   "mean_reciprocal_rank", "precision_at_1", "r_precision"])
        b = AccuracyCalculator(exclude=("AMI", "NMI")).get_accuracy(x, y, include=("precision_at_1", "r_precision"))
        self.assertEqual(list(b), ["precision_at_1", "r_precision"])
        self.assertEqual(a["precision_at_1"], b["precision_at_1"])

    def test_lone_queries_are_nan(self):
        q = arange(4, 1)
        a = AccuracyCalculator(include=("precision_at_1", "mean_average_precision_at_r")).get_accuracy(
            q, [6, 7, 8, 9], arange(4, 1), [0, 1, 2, 3])
        self.assertTrue(math.isnan(a["precision_at_1"]) and math.isnan(a["mean_average_precision_at_r"]))

    def test_argument_checks(self):
        with self.assertRaises(ValueError):
            AccuracyCalculator(include=("recall_at_1",))
        with self.assertRaises(TypeError):
            AccuracyCalculator(include="precision_at_1")
        with self.assertRaises(ValueError):
            AccuracyCalculator(avg_of_avgs=True, return_per_class=True)
        with self.assertRaises(ValueError):
            AccuracyCalculator(k=0)
        with self.assertRaises(NotImplementedError):
            AccuracyCalculator(label_comparison_fn=lambda a, b: a == b)
        calc = AccuracyCalculator()
        x = arange(5, 1)
        with self.assertRaises(ValueError):
            calc.get_accuracy(x, [0, 0, 1, 1])
        with self.assertRaises(ValueError):  # the queries are not the reference's first rows
            calc.get_accuracy(x[1:3], [0, 1], x, [0, 0, 1, 1, 1], ref_includes_query=True)

    @unittest.skipUnless(HAVE_TORCH, "torch not installed")
    def test_torch(self):
        import torch
        x = np.random.default_rng(1).random((50, 3), dtype=np.float32)
        y = np.arange(50) % 5
        calc = AccuracyCalculator(include=("precision_at_1", "mean_average_precision_at_r"))
        self.assertEqual(calc.get_accuracy(x, y), calc.get_accuracy(torch.from_numpy(x), torch.from_numpy(y)))


if __name__ == "__main__":
    unittest.main()
