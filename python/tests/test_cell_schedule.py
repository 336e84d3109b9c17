"""Cell.schedule_epochs: the length a schedule is sized from, apart from
the epochs a final cell trains (docs/external.md)."""

import unittest

from dmlbench.contract import Cell


def contract(**kw):
    d = {"stage": "final", "seed": 0, "epochs": 5, "dir": "/d", "train": {}, "embed": {}, "embeddings": "/e",
         "params": {"epochs": 6}}
    d.update(kw)
    return d


class TestScheduleEpochs(unittest.TestCase):
    def test_final_cell_has_both(self):
        c = Cell(contract(schedule_epochs=6))
        self.assertEqual((c.epochs, c.schedule_epochs), (5, 6))

    def test_older_contract_falls_back_to_epochs(self):
        self.assertEqual(Cell(contract()).schedule_epochs, 5)


if __name__ == "__main__":
    unittest.main()
