"""Shared set-up of the package's tests: the binary and optional torch."""

import os
import shutil
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def need_binary(cls):
    """Skips the class when no dmlbench binary can be found."""
    b = os.environ.get("DMLBENCH_BIN") or shutil.which("dmlbench")
    if not b:
        local = os.path.join(ROOT, "bin", "dmlbench")
        if os.path.exists(local):
            os.environ["DMLBENCH_BIN"] = local
            b = local
    return unittest.skipUnless(b, "no dmlbench binary (make build; DMLBENCH_BIN)")(cls)


try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
