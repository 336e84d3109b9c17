"""The cell contract of command cells (docs/external.md), trainer side.

dmlbench runs a trainer's command with DMLBENCH_CELL set to the cell's
JSON. The trainer trains on the rows ``train.rows`` names, and after every
epoch writes the embeddings of the rows each ``embed`` split names with
``save_embeddings``; dmlbench labels and scores them.
"""

import json
import operator
import os
import re
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
        """Labels of the rows of ``split``, from DATA/{train,test}_labels.npy or .txt.

        A .txt file is read by its documented rules (docs/formats.md): one
        label per line, surrounding white space trimmed; labels that are all
        integers come back as int64 values ("07" and "7" are one class, as
        dmlbench scores them), others as strings.
        """
        spec = self.train if split == "train" else self.embed[split]
        base = os.path.join(self.data, spec["split"] + "_labels")
        if os.path.isfile(base + ".npy"):
            y = np.load(base + ".npy")
        elif os.path.isfile(base + ".txt"):
            y = read_text_labels(base + ".txt")
        else:
            raise FileNotFoundError(f"data set {self.data}: no {spec['split']}_labels.npy (or .txt)")
        return y[self.rows(split)]

    def save_embeddings(self, epoch, split, embeddings):
        return save_embeddings(epoch, split, embeddings, _cell=self)

    def log(self, epoch, loss):
        """Records the training loss of an epoch (shown in run.json's history)."""
        with open(os.path.join(self.dir, "trainer-loss.tsv"), "a", encoding="utf-8") as f:
            f.write(f"{_epoch(epoch, self)}\t{float(loss)!r}\n")


_INTEGER = re.compile(r"[+-]?[0-9]+")


def read_text_labels(path):
    """A text label file as dmlbench reads it: int64 values when every label is an integer, else str."""
    with open(path, "rb") as f:
        raw = f.read()
    if b"\0" in raw:
        raise ValueError(f"{path}: binary data in a text label file")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    lines = raw.decode("utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    labels = [v.strip() for v in lines]
    for i, v in enumerate(labels):
        if not v:
            raise ValueError(f"{path}: line {i + 1} is empty (one label per line expected)")
    if not labels:
        raise ValueError(f"{path}: no labels")
    if all(_INTEGER.fullmatch(v) and -(1 << 63) <= int(v) < (1 << 63) for v in labels):
        return np.array([int(v) for v in labels], dtype=np.int64)
    return np.array(labels, dtype=str)


_current = None


def cell():
    """The cell of this process (DMLBENCH_CELL: the JSON itself or a path to it)."""
    global _current
    if _current is None:
        v = os.environ.get(ENV)
        if not v:
            raise RuntimeError(f"{ENV} is not set: this script is meant to be run by `dmlbench tune` (docs/external.md)")
        _current = Cell(_read_cell(v))
    return _current


# Keys of DMLBENCH_CELL a trainer cannot do without, with their JSON types.
_REQUIRED = (("stage", str), ("seed", int), ("epochs", int), ("dir", str), ("train", dict),
             ("embed", dict), ("embeddings", str))


def _read_cell(v):
    """DMLBENCH_CELL's value (JSON or a path to it) as a dict; one line saying what is wrong otherwise."""
    where = ENV if v.lstrip().startswith("{") else f"{ENV}={v}"
    try:
        if v.lstrip().startswith("{"):
            d = json.loads(v)
        else:
            with open(v, encoding="utf-8") as f:
                d = json.load(f)
    except OSError as e:
        raise RuntimeError(f"{where}: cannot read the cell file ({e.strerror or e})") from None
    except ValueError as e:
        raise RuntimeError(f"{where}: not valid JSON ({e})") from None
    if not isinstance(d, dict):
        raise RuntimeError(f"{where}: want a JSON object, got {type(d).__name__}")
    for key, want in _REQUIRED:
        if key not in d:
            raise RuntimeError(f"{where}: no {key!r} key (docs/external.md lists the cell's keys)")
        if not isinstance(d[key], want) or isinstance(d[key], bool):
            raise RuntimeError(f"{where}: {key!r} is {d[key]!r}, want a JSON {_JSON_TYPE[want]}")
    return d


_JSON_TYPE = {str: "string", int: "integer", dict: "object"}


def _epoch(epoch, c):
    """epoch as an int in 1 … c.epochs; a fraction, a bool or a string is refused, not rounded."""
    try:
        if isinstance(epoch, bool):
            raise TypeError
        e = operator.index(epoch)
    except TypeError:
        raise ValueError(f"epoch {epoch!r}: want an integer 1 … {c.epochs}") from None
    if not (1 <= e <= c.epochs):
        raise ValueError(f"epoch {epoch}: want 1 … {c.epochs}")
    return e


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
    epoch = _epoch(epoch, c)
    if not c.asks(epoch):
        return None
    a = embeddings_array(embeddings, f"embeddings of {split}")
    want = c.embed[split]["count"]
    if a.shape[0] != want:
        raise ValueError(f"embeddings of {split}: {a.shape[0]} rows, the cell asks for {want}")
    os.makedirs(c.embeddings, exist_ok=True)
    path = embedding_path(c, epoch, split)
    # dmlbench's own temporary-file prefix: the next run of a cell killed
    # mid-write removes the leftover (experiments/cell, cleanStaleTemps).
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=c.embeddings)
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
