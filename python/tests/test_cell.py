import json
import os
import shutil
import tempfile
import unittest

import numpy as np

import dmlbench
from dmlbench import contract as cellmod


class TestCell(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        data = os.path.join(self.dir, "data")
        os.makedirs(data)
        np.save(os.path.join(data, "train_labels.npy"), np.array([5, 5, 6, 6, 7, 7]))
        np.save(os.path.join(self.dir, "train_rows.npy"), np.array([0, 1, 2, 3], dtype=np.int64))
        np.save(os.path.join(self.dir, "val_rows.npy"), np.array([4, 5], dtype=np.int64))
        self.spec = {"stage": "tune", "method": "m", "trial": 0, "fold": 1, "folds": 3,
                     "params": {"lr": 0.01, "arch": "mlp"}, "seed": 4, "epochs": 2, "dir": self.dir, "data": data,
                     "train": {"split": "train", "rows": os.path.join(self.dir, "train_rows.npy"), "count": 4},
                     "embed": {"val": {"split": "train", "rows": os.path.join(self.dir, "val_rows.npy"), "count": 2}},
                     "embed_epochs": [1, 2], "embeddings": os.path.join(self.dir, "emb")}
        os.environ["DMLBENCH_CELL"] = json.dumps(self.spec)
        os.environ.pop("DMLBENCH_RESUME", None)
        cellmod._current = None

    def tearDown(self):
        shutil.rmtree(self.dir)
        cellmod._current = None
        os.environ.pop("DMLBENCH_CELL", None)

    def test_contract(self):
        c = dmlbench.cell()
        self.assertEqual((c.stage, c.seed, c.epochs, c.params["lr"], c.resume), ("tune", 4, 2, 0.01, False))
        self.assertEqual(c.labels("train").tolist(), [5, 5, 6, 6])
        self.assertEqual(c.labels("val").tolist(), [7, 7])
        p = dmlbench.save_embeddings(1, "val", np.ones((2, 3)))
        self.assertEqual(os.path.basename(p), "val_e001.npy")
        a = np.load(p)
        self.assertEqual((a.dtype, a.shape), (np.float32, (2, 3)))
        self.assertEqual(sorted(os.listdir(c.embeddings)), ["val_e001.npy"])  # no temporary left

    def test_unasked_epoch_writes_nothing(self):
        self.spec["embed_epochs"] = [2]
        os.environ["DMLBENCH_CELL"] = json.dumps(self.spec)
        self.assertIsNone(dmlbench.save_embeddings(1, "val", np.ones((2, 3))))
        self.assertIsNotNone(dmlbench.save_embeddings(2, "val", np.ones((2, 3))))
        self.assertEqual(os.listdir(self.spec["embeddings"]), ["val_e002.npy"])

    def test_path_form_and_resume(self):
        path = os.path.join(self.dir, "cell.json")
        with open(path, "w") as f:
            json.dump(self.spec, f)
        os.environ["DMLBENCH_CELL"] = path
        os.environ["DMLBENCH_RESUME"] = "1"
        self.assertTrue(dmlbench.cell().resume)

    def test_refusals(self):
        with self.assertRaisesRegex(ValueError, "3 rows, the cell asks for 2"):
            dmlbench.save_embeddings(1, "val", np.ones((3, 3)))
        with self.assertRaisesRegex(ValueError, "epoch 3"):
            dmlbench.save_embeddings(3, "val", np.ones((2, 3)))
        with self.assertRaisesRegex(ValueError, "embeds"):
            dmlbench.save_embeddings(1, "test", np.ones((2, 3)))
        os.environ.pop("DMLBENCH_CELL")
        cellmod._current = None
        with self.assertRaisesRegex(RuntimeError, "DMLBENCH_CELL"):
            dmlbench.cell()


if __name__ == "__main__":
    unittest.main()
