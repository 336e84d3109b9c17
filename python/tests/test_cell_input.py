"""The trainer side of the cell contract on awkward input: text label files, a
malformed DMLBENCH_CELL, epochs that are not integers."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np

import dmlbench
from dmlbench import contract as cellmod


class TestCellInput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.data)
        np.save(os.path.join(self.dir, "train_rows.npy"), np.array([0, 1, 2, 3], dtype=np.int64))
        np.save(os.path.join(self.dir, "val_rows.npy"), np.array([4, 5], dtype=np.int64))
        self.spec = {"stage": "tune", "method": "m", "seed": 4, "epochs": 2, "dir": self.dir, "data": self.data,
                     "train": {"split": "train", "rows": os.path.join(self.dir, "train_rows.npy"), "count": 4},
                     "embed": {"val": {"split": "train", "rows": os.path.join(self.dir, "val_rows.npy"), "count": 2}},
                     "embeddings": os.path.join(self.dir, "emb")}
        self.set_cell(json.dumps(self.spec))

    def tearDown(self):
        shutil.rmtree(self.dir)
        cellmod._current = None
        os.environ.pop("DMLBENCH_CELL", None)

    def set_cell(self, v):
        os.environ["DMLBENCH_CELL"] = v
        cellmod._current = None

    def write_labels(self, text):
        with open(os.path.join(self.data, "train_labels.txt"), "wb") as f:
            f.write(text)

    def test_integer_text_labels(self):
        # values, as dmlbench reads the file: "07", "+7" and " 7" are class 7
        self.write_labels(b"\xef\xbb\xbf 7\n07\n+7\n8\r\n9\n-1\n")
        c = dmlbench.cell()
        self.assertEqual(c.labels("train").dtype, np.int64)
        self.assertEqual(c.labels("train").tolist(), [7, 7, 7, 8])
        self.assertEqual(c.labels("val").tolist(), [9, -1])

    def test_string_text_labels(self):
        self.write_labels(b"cat \n\tcat\ndog\n07\n7\nz\xc3\xa9bre")
        c = dmlbench.cell()
        self.assertEqual(c.labels("train").tolist(), ["cat", "cat", "dog", "07"])
        self.assertEqual(c.labels("val").tolist(), ["7", "z\u00e9bre"])

    def test_npy_labels_come_first(self):
        np.save(os.path.join(self.data, "train_labels.npy"), np.array([5, 5, 6, 6, 7, 7]))
        self.write_labels(b"a\na\nb\nb\nc\nc\n")
        self.assertEqual(dmlbench.cell().labels("val").tolist(), [7, 7])

    def test_bad_text_labels(self):
        self.write_labels(b"a\n\nb\n")
        with self.assertRaisesRegex(ValueError, "line 2 is empty"):
            dmlbench.cell().labels("train")
        os.remove(os.path.join(self.data, "train_labels.txt"))
        with self.assertRaisesRegex(FileNotFoundError, "no train_labels.npy"):
            dmlbench.cell().labels("train")

    def test_malformed_cell(self):
        missing = dict(self.spec)
        del missing["embed"]
        cases = [('{"stage": "tune",', "DMLBENCH_CELL: not valid JSON"),
                 (json.dumps(missing), "DMLBENCH_CELL: no 'embed' key"),
                 (json.dumps(dict(self.spec, epochs="2")), "DMLBENCH_CELL: 'epochs' is '2', want a JSON integer"),
                 (json.dumps(dict(self.spec, seed=True)), "'seed' is True"),
                 (os.path.join(self.dir, "absent.json"), "^DMLBENCH_CELL=.*absent.json: cannot read the cell file"),
                 ("[1, 2]", "want a JSON object")]
        path = os.path.join(self.dir, "list.json")
        with open(path, "w") as f:
            f.write("[1, 2]")
        cases[-1] = (path, "list.json: want a JSON object, got list")
        for v, want in cases:
            self.set_cell(v)
            with self.assertRaisesRegex(RuntimeError, want) as cm:
                dmlbench.cell()
            self.assertNotIn("\n", str(cm.exception))
            self.assertIsNone(cm.exception.__cause__)
            self.assertTrue(cm.exception.__suppress_context__ or cm.exception.__context__ is None)

    def test_epoch_must_be_an_integer(self):
        for bad in (1.7, 1.0, True, "1", None):
            with self.assertRaisesRegex(ValueError, r"want an integer 1 … 2"):
                dmlbench.save_embeddings(bad, "val", np.ones((2, 3)))
            with self.assertRaisesRegex(ValueError, r"want an integer 1 … 2"):
                dmlbench.cell().log(bad, 0.5)
        self.assertFalse(os.path.exists(self.spec["embeddings"]))
        p = dmlbench.save_embeddings(np.int64(2), "val", np.ones((2, 3)))
        self.assertEqual(os.path.basename(p), "val_e002.npy")


if __name__ == "__main__":
    unittest.main()
