"""String labels from Python reach the scores exactly as Python compares them."""

import unittest

import numpy as np

import dmlbench
from helpers import need_binary

# On a line: each point's nearest neighbour is the next one, whose label
# differs from its own by a trailing blank or a leading zero only.
X = np.array([[0.0], [1.0], [10.0], [11.0]], dtype=np.float32)


@need_binary
class TestExactLabels(unittest.TestCase):
    def test_spellings_are_distinct_classes(self):
        # names in code point order; all-integer names by value, then text
        for a, b, names in (("c0", "c0 ", ["c0", "c0 "]), ("1", "01", ["01", "1"]), ("x", " x", [" x", "x"])):
            y = np.array([a, b, a, b])
            r = dmlbench.evaluate(X, y, metrics=["R@1"], per_class=True, warn=False)
            self.assertEqual(r["metrics"]["R@1"], 0, (a, b))
            self.assertEqual([c["class"] for c in r["per_class"]], names)

    def test_list_of_str(self):
        r = dmlbench.evaluate(X, ["1", "01", "1", "01"], metrics=["R@1"], warn=False)
        self.assertEqual(r["metrics"]["R@1"], 0)
        r = dmlbench.evaluate(X, ["1", "1", "01", "01"], metrics=["R@1"], warn=False)
        self.assertEqual(r["metrics"]["R@1"], 1)

    def test_gallery_shares_the_exact_classes(self):
        g = np.array([[0.1], [5.0]], dtype=np.float32)
        r = dmlbench.evaluate(X[:1], ["c0"], gallery=g, gallery_labels=["c0 ", "c0"], metrics=["R@1"], warn=False)
        self.assertEqual(r["metrics"]["R@1"], 0)
        r = dmlbench.evaluate(X[:1], ["c0"], gallery=g, gallery_labels=["c0", "c0 "], metrics=["R@1"], warn=False)
        self.assertEqual(r["metrics"]["R@1"], 1)

    def test_integers_and_strings_refused_together(self):
        g = np.array([[0.1], [5.0]], dtype=np.float32)
        with self.assertRaisesRegex(dmlbench.DmlbenchError, "^labels holds integer labels but gallery_labels holds strings"):
            dmlbench.evaluate(X[:1], [7], gallery=g, gallery_labels=["7", "8"], metrics=["R@1"])

    def test_accuracy_calculator(self):
        y = ["c0", "c0 ", "c0", "c0 "]
        ac = dmlbench.AccuracyCalculator(include=("precision_at_1",), return_per_class=True)
        self.assertEqual(ac.get_accuracy(X, y)["precision_at_1"], [0.0, 0.0])
        ac = dmlbench.AccuracyCalculator(include=("precision_at_1",))
        self.assertEqual(ac.get_accuracy(X, ["01", "1", "01", "1"])["precision_at_1"], 0.0)
        self.assertEqual(ac.get_accuracy(X, ["01", "01", "1", "1"])["precision_at_1"], 1.0)


if __name__ == "__main__":
    unittest.main()
