"""Errors of the binary in the caller's words: a scratch file's path is
replaced by the name of the argument it holds."""

import contextlib
import os
import re

from ._cli import DmlbenchError


@contextlib.contextmanager
def argument_names(scratch, names):
    """Re-raises DmlbenchError with SCRATCH/FILE.npy (or .txt) replaced by
    names[FILE] (default: FILE), so a message reads ``query: row 3 contains
    NaN`` rather than naming a temporary file."""
    try:
        yield
    except DmlbenchError as e:
        pat = re.compile(re.escape(scratch.dir + os.sep) + r"([A-Za-z0-9_]+)\.(?:npy|txt)")
        msg = pat.sub(lambda m: names.get(m.group(1), m.group(1)), e.message)
        raise DmlbenchError(msg, e.returncode, e.command) from None
