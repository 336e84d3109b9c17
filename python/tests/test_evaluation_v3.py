"""dmlbench.evaluation against pytorch-metric-learning 3's documented behaviour.

PML 3 could not be run here: each case is a behaviour its 3.0.x
documentation states (release notes 3.0.0rc1–rc5, 3.0.0, migration guide),
with values computed by hand.
"""

import math
import unittest

import numpy as np

from dmlbench import AccuracyCalculator as V2
from dmlbench.evaluation import AccuracyCalculator, RetrievalInputs, RetrievalMetric, ndcg_metric, precision_at_k
from helpers import need_binary


def line(*xs):
    return np.array(xs, dtype=np.float32)[:, None]


@need_binary
class TestV3Calculator(unittest.TestCase):
    # 1-D points: labels 0 0 1 1 1 2 (label 2 is a lone query)
    x = line(0, 1, 10, 11, 13, 50)
    y = np.array([0, 0, 1, 1, 1, 2])

    def test_builtin_numbers_equal_v2(self):
        # No documented v3 change alters the built-in metrics (docs/metrics.md).
        a = AccuracyCalculator().get_accuracy(self.x, self.y)
        b = V2().get_accuracy(self.x, self.y)
        self.assertEqual(list(a), list(b))
        for k in a:
            self.assertTrue(a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])), k)

    def test_custom_metric_per_query_lone_dropped(self):
        # migration guide: function(inputs) returns one value per query; the
        # calculator drops lone queries and reduces.
        seen = {}

        def p2(inputs):
            seen["inputs"] = inputs
            return precision_at_k(inputs, 2)

        calc = AccuracyCalculator(include=("precision_at_2",), custom_metrics={"precision_at_2": RetrievalMetric(p2, neighbors=2)})
        a = calc.get_accuracy(self.x, self.y)
        # per query: 0 → [1(0), 10(1)] 1/2; 1 → [0(0), 10(1)] 1/2; 10 → [11, 13] 1;
        # 11 → [10, 13] 1; 13 → [11, 10] 1; 50 (lone) dropped
        self.assertAlmostEqual(a["precision_at_2"], (0.5 + 0.5 + 1 + 1 + 1) / 5, places=15)
        inp = seen["inputs"]
        self.assertIsInstance(inp, RetrievalInputs)
        self.assertEqual(inp.knn_labels.shape, (6, 2))
        self.assertEqual(inp.relevant_counts.tolist(), [1, 1, 2, 2, 2, 0])
        self.assertTrue(inp.ref_includes_query)
        self.assertEqual(inp.reference_labels.tolist(), self.y.tolist())
        np.testing.assert_array_equal(inp.knn_indices[0], [1, 2])

    def test_nan_values_do_not_count(self):
        # exclude_lone_queries=False: the metric decides through NaN (rc4).
        def first_only(inputs):
            v = np.full(len(inputs.query_labels), np.nan)
            v[0] = 0.25
            return v

        calc = AccuracyCalculator(include=("m",), custom_metrics={"m": RetrievalMetric(first_only, neighbors=1, exclude_lone_queries=False)})
        self.assertEqual(calc.get_accuracy(self.x, self.y)["m"], 0.25)

    def test_lone_kept_when_asked(self):
        ones = RetrievalMetric(lambda inp: np.ones(len(inp.query_labels)), neighbors=1, exclude_lone_queries=False)
        zero_lone = RetrievalMetric(lambda inp: (inp.relevant_counts > 0).astype(float), neighbors=1, exclude_lone_queries=False)
        a = AccuracyCalculator(include=("a", "b"), custom_metrics={"a": ones, "b": zero_lone}).get_accuracy(self.x, self.y)
        self.assertEqual(a, {"a": 1.0, "b": 5 / 6})

    def test_per_class_and_avg_of_avgs(self):
        m = {"p1": RetrievalMetric(lambda inp: precision_at_k(inp, 1), neighbors=1)}
        per = AccuracyCalculator(include=("p1",), custom_metrics=m, return_per_class=True).get_accuracy(self.x, self.y)["p1"]
        self.assertEqual(per[:2], [1.0, 1.0])
        self.assertTrue(math.isnan(per[2]))
        avg = AccuracyCalculator(include=("p1",), custom_metrics=m, avg_of_avgs=True).get_accuracy(self.x, self.y)["p1"]
        self.assertEqual(avg, 1.0)

    def test_separate_reference(self):
        m = {"p1": RetrievalMetric(lambda inp: precision_at_k(inp, 1), neighbors=1)}
        a = AccuracyCalculator(include=("p1",), custom_metrics=m).get_accuracy(line(0, 12), [0, 1], line(1, 10, 14), [1, 0, 1])
        # 0 → 1 (label 1) miss; 12 → 10 (label 0)? |12-10| = 2 < |12-14| = 2: tie → lower index 1 (label 0): miss
        self.assertEqual(a["p1"], 0.0)

    def test_ndcg_graded(self):
        # gains: same label 2, label differing by one 1, else 0
        rel = lambda q, r: np.where(q == r, 2.0, np.where(np.abs(q - r) == 1, 1.0, 0.0))
        x, y = line(0, 1, 2, 3), np.array([0, 1, 0, 5])
        calc = AccuracyCalculator(include=("ndcg",), custom_metrics={"ndcg": ndcg_metric(rel, neighbors=2)})
        got = calc.get_accuracy(x, y)["ndcg"]
        d = [1, 1 / math.log2(3)]
        # q0: nn 1(g1), 2(g2): dcg 1 + 2·d1; ideal 2, 1
        q0 = (1 + 2 * d[1]) / (2 + 1 * d[1])
        # q1: nn 0(g1), 2(g1) [tie: lower index first]; ideal 1, 1 → 1
        q1 = 1.0
        # q2: nn 1(g1), 3(g0); ideal 2 (row 0), 1 → (1)/(2 + d1)
        q2 = 1 / (2 + d[1])
        # q3: label 5 gains all 0 → NaN, does not count
        self.assertAlmostEqual(got, (q0 + q1 + q2) / 3, places=12)

    def test_argument_checks(self):
        with self.assertRaises(TypeError):
            RetrievalMetric("not callable")
        with self.assertRaises(ValueError):
            RetrievalMetric(len, neighbors=0)
        with self.assertRaises(ValueError):
            AccuracyCalculator(custom_metrics={"precision_at_1": RetrievalMetric(len)})
        with self.assertRaises(ValueError):
            AccuracyCalculator(include=("nope",))
        bad = AccuracyCalculator(include=("m",), custom_metrics={"m": RetrievalMetric(lambda inp: [1.0], neighbors=1)})
        with self.assertRaises(ValueError):
            bad.get_accuracy(self.x, self.y)

    def test_import_path(self):
        import dmlbench
        self.assertIs(dmlbench.evaluation.AccuracyCalculator, AccuracyCalculator)
        self.assertIsNot(dmlbench.AccuracyCalculator, AccuracyCalculator)


if __name__ == "__main__":
    unittest.main()
