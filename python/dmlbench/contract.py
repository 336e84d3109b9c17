"""The cell contract of command cells (docs/external.md), trainer side.

dmlbench runs a trainer's command with DMLBENCH_CELL set to the cell's
JSON. The trainer trains on the rows ``train.rows`` names, and after every
epoch writes the embeddings of the rows each ``embed`` split names with
``save_embeddings``; dmlbench labels and scores them.
"""

import json
import os
import tempfile

import numpy as np

from ._cli import embeddings_array

ENV = "DMLBENCH_CELL"
RESUME_ENV = "DMLBENCH_RESUME"
# Exit status of a trainer whose configuration failed (e.g. the loss
# diverged): the trial is finished with the worst score, not retried.
EXIT_DIVERGED = 3


class Diverged(Exception):
    """Raise (or call exit_diverged) when this configuration cannot train."""


class Cell:
    """One cell of dmlbench tune, as DMLBENCH_CELL describes it.

    Attributes: stage ("tune" or "final"), method, trial, fold, folds,
    params (fixed settings and this trial's values, by spec name), seed,
    epochs (how many epochs this cell trains), schedule_epochs (the length
    to size a learning-rate schedule from: the tuning cells' epoch count,
    also in the final stage, whose epochs is the epoch chosen on
    validation), dir (the cell's directory, for checkpoints), data (the data set
    directory), items (per split, its item list when the data set has one),
    train (split, rows file, count), embed (per split name: the data set
    split, rows file and count), embed_epochs (the epochs after which they
    are asked), embeddings (where save_embeddings writes), resume (True
    when restarted after an interruption).
    """

    def __init__(self, d):
        self.raw = d
        self.stage = d["stage"]
        self.method = d.get("method", "")
        self.trial = d.get("trial", 0)
        self.fold = d.get("fold", 0)
        self.folds = d.get("folds", 0)
        self.params = d.get("params", {})
        self.seed = d["seed"]
        self.epochs = d["epochs"]
        # The final stage trains `epochs` (chosen on validation) of a
        # schedule sized for `schedule_epochs` (the tuning cells' count).
        self.schedule_epochs = d.get("schedule_epochs") or self.epochs
        self.dir = d["dir"]
        self.data = d.get("data", "")
        self.train = d["train"]
        self.embed = d["embed"]
        self.embeddings = d["embeddings"]
        self.embed_epochs = list(d.get("embed_epochs") or range(1, self.epochs + 1))
        self.items = d.get("items") or {}
        self.resume = bool(d.get("resume")) or os.environ.get(RESUME_ENV) == "1"

    def asks(self, epoch):
        """Whether embeddings are asked after this epoch (the final stage asks for the last only)."""
        return int(epoch) in self.embed_epochs

    def rows(self, split):
        """Row numbers (int64) into the data set's split of ``train`` or an embed split."""
        spec = self.train if split == "train" else self.embed[split]
        return np.load(spec["rows"])

    def labels(self, split):
        """Labels of the rows of ``split`` (from DATA/{train,test}_labels.npy)."""
        spec = self.train if split == "train" else self.embed[split]
        y = np.load(os.path.join(self.data, spec["split"] + "_labels.npy"))
        return y[self.rows(split)]

    def save_embeddings(self, epoch, split, embeddings):
        return save_embeddings(epoch, split, embeddings, _cell=self)

    def log(self, epoch, loss):
        """Records the training loss of an epoch (shown in run.json's history)."""
        with open(os.path.join(self.dir, "trainer-loss.tsv"), "a", encoding="utf-8") as f:
            f.write(f"{int(epoch)}\t{float(loss)!r}\n")


_current = None


def cell():
    """The cell of this process (DMLBENCH_CELL: the JSON itself or a path to it)."""
    global _current
    if _current is None:
        v = os.environ.get(ENV)
        if not v:
            raise RuntimeError(f"{ENV} is not set: this script is meant to be run by `dmlbench tune` (docs/external.md)")
        if v.lstrip().startswith("{"):
            d = json.loads(v)
        else:
            with open(v, encoding="utf-8") as f:
                d = json.load(f)
        _current = Cell(d)
    return _current


def embedding_path(c, epoch, split):
    """Where the embeddings of ``split`` after ``epoch`` go (1-based epochs)."""
    return os.path.join(c.embeddings, f"{split}_e{int(epoch):03d}.npy")


def save_embeddings(epoch, split, embeddings, _cell=None):
    """Writes the embeddings of ``split``'s rows after ``epoch`` (1 … epochs), atomically.

    embeddings: N×D numpy array or torch tensor, row i the embedding of
    row ``rows(split)[i]`` of the data set. The file appears complete or
    not at all (written beside, then renamed). An epoch the cell does not
    ask for (``asks``) writes nothing and returns None, so a trainer may
    call this after every epoch.
    """
    c = _cell if _cell is not None else cell()
    if split not in c.embed:
        raise ValueError(f"split {split!r}: this cell embeds {sorted(c.embed)}")
    if not (1 <= int(epoch) <= c.epochs):
        raise ValueError(f"epoch {epoch}: want 1 … {c.epochs}")
    if not c.asks(epoch):
        return None
    a = embeddings_array(embeddings, f"embeddings of {split}")
    want = c.embed[split]["count"]
    if a.shape[0] != want:
        raise ValueError(f"embeddings of {split}: {a.shape[0]} rows, the cell asks for {want}")
    os.makedirs(c.embeddings, exist_ok=True)
    path = embedding_path(c, epoch, split)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path), dir=c.embeddings)
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, a, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def exit_diverged(message=""):
    """Ends the trainer with the status that marks a failed configuration."""
    import sys
    if message:
        print(message, file=sys.stderr)
    sys.exit(EXIT_DIVERGED)
