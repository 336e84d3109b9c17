"""The v2.8.1 drop-in where PML's code (utils/accuracy_calculator.py,
v2.8.1) returns or logs what a plain port would not."""

import logging
import math
import unittest

import numpy as np

from dmlbench import AccuracyCalculator, DmlbenchError, evaluate
from helpers import need_binary


@need_binary
class TestDropInGaps(unittest.TestCase):
    def test_one_label(self):
        # PML: every neighbour matches; NMI = AMI = 1 (scikit-learn, one class in one cluster).
        x = np.array([[0.0], [1.0]], dtype=np.float32)
        a = AccuracyCalculator().get_accuracy(x, [4, 4])
        self.assertEqual(set(a.values()), {1.0})

    def test_subclass_metric_refused_with_v3_form(self):
        class WithP2(AccuracyCalculator):
            def calculate_precision_at_2(self, knn_labels, query_labels, **kwargs):
                return 0.0

            def requires_knn(self):
                return super().requires_knn() + ["precision_at_2"]

        with self.assertRaises(NotImplementedError) as cm:
            WithP2()
        self.assertIn("custom_metrics={'precision_at_2': RetrievalMetric(", str(cm.exception))

    def test_subclass_override_refused(self):
        # dmlbench would compute its own precision_at_1, not the override
        class Override(AccuracyCalculator):
            def calculate_precision_at_1(self, knn_labels, query_labels, **kwargs):
                return 0.5

        with self.assertRaises(NotImplementedError):
            Override()

    def test_small_k_warning(self):
        x = np.arange(12, dtype=np.float32)[:, None]
        y = np.array([0] * 6 + [1] * 6)
        with self.assertLogs("PML", level="WARNING") as cm:
            AccuracyCalculator(include=("mean_average_precision_at_r",), k=3).get_accuracy(x, y)
        self.assertIn("the value for k (3) is less than the max bin count (6)", cm.output[0])
        # mean_average_precision alone: no warning (PML names only MAP@R and R-Precision)
        with self.assertLogs("PML", level="WARNING") as cm:
            logging.getLogger("PML").warning("sentinel")
            AccuracyCalculator(include=("mean_average_precision",), k=3).get_accuracy(x, y)
        self.assertEqual(cm.output, ["WARNING:PML:sentinel"])

    def test_no_query_label_in_reference_warning(self):
        q = np.arange(3, dtype=np.float32)[:, None]
        with self.assertLogs("PML", level="WARNING") as cm:
            a = AccuracyCalculator(include=("precision_at_1",)).get_accuracy(q, [7, 8, 9], q, [0, 1, 2])
        self.assertIn("None of the query labels are in the reference set.", cm.output[0])
        self.assertTrue(math.isnan(a["precision_at_1"]))

    def test_errors_name_the_argument(self):
        x = np.random.default_rng(0).random((5, 2), dtype=np.float32)
        x[3, 1] = np.nan
        for call, name in ((lambda: AccuracyCalculator().get_accuracy(x, [0, 0, 1, 1, 1]), "query"),
                           (lambda: AccuracyCalculator().get_accuracy(x[:2], [0, 1], x, [0, 0, 1, 1, 1]), "reference"),
                           (lambda: evaluate(x, [0, 0, 1, 1, 1]), "embeddings")):
            with self.assertRaises(DmlbenchError) as cm:
                call()
            msg = str(cm.exception)
            self.assertIn(f"{name}: row 3", msg)
            self.assertNotIn("dmlbench-", msg)
            self.assertNotIn(".npy", msg)

    def test_label_comparison_fn_refused(self):
        with self.assertRaises(NotImplementedError):
            AccuracyCalculator(label_comparison_fn=lambda a, b: a == b)


if __name__ == "__main__":
    unittest.main()
