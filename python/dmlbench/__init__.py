"""dmlbench from Python: evaluation in the training loop, a drop-in
AccuracyCalculator for pytorch-metric-learning users, and the cell contract
of trainers run by `dmlbench tune` (docs/external.md).

The work is done by the dmlbench binary, found through DMLBENCH_BIN, then
PATH; arrays go to it as temporary .npy files.
"""

from ._cli import BinaryNotFoundError, DmlbenchError, find_binary
from .contract import EXIT_DIVERGED, Cell, Diverged, cell, exit_diverged, save_embeddings
from .evaluate import DmlbenchWarning, evaluate
from .pml import AccuracyCalculator
from . import evaluation  # noqa: E402  pytorch-metric-learning 3's API: dmlbench.evaluation.AccuracyCalculator

__all__ = ["evaluate", "AccuracyCalculator", "cell", "save_embeddings", "Cell", "EXIT_DIVERGED",
           "Diverged", "exit_diverged", "DmlbenchError", "DmlbenchWarning", "BinaryNotFoundError",
           "find_binary"]
__version__ = "0.1.0"
