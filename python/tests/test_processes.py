"""A killed Python caller takes its dmlbench process with it, and the
scratch directories of dead callers are removed by the next call."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from helpers import ROOT

from dmlbench import _cli


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _wait(pred, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


@unittest.skipUnless(sys.platform.startswith("linux") and os.path.isdir("/proc"), "Linux only")
class TestKilledCaller(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", self.tmp]))
        # A binary that records its pid and arguments, then hangs.
        self.fake = os.path.join(self.tmp, "fake-dmlbench")
        with open(self.fake, "w") as f:
            f.write(textwrap.dedent(f"""\
                #!/bin/sh
                echo "$@" > {self.tmp}/args.txt
                echo $$ > {self.tmp}/pid.txt
                exec sleep 60
                """))
        os.chmod(self.fake, 0o755)

    def test_child_dies_with_killed_caller(self):
        env = dict(os.environ, DMLBENCH_BIN=self.fake,
                   PYTHONPATH=os.path.join(ROOT, "python"))
        caller = subprocess.Popen([sys.executable, "-c",
                                   "import numpy as np, dmlbench\n"
                                   "dmlbench.evaluate(np.zeros((4, 2)), [0, 0, 1, 1])\n"], env=env)
        self.addCleanup(caller.kill)
        pid_file = os.path.join(self.tmp, "pid.txt")
        self.assertTrue(_wait(lambda: _read(pid_file).strip(), 30), "the fake binary did not start")
        child = int(_read(pid_file))
        args = _read(os.path.join(self.tmp, "args.txt")).split()
        scratch = os.path.dirname(args[args.index("--emb") + 1])
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", scratch]))
        self.assertTrue(os.path.basename(scratch).startswith(f"dmlbench-{caller.pid}-"), scratch)
        os.kill(caller.pid, signal.SIGKILL)
        caller.wait()
        if not _wait(lambda: not _alive(child), 5):
            os.kill(child, signal.SIGKILL)
            self.fail(f"dmlbench eval (pid {child}) outlived its killed Python caller")
        # The killed caller's arrays are left; the next call removes them.
        self.assertTrue(os.path.isdir(scratch))
        _cli.remove_stale_scratch()
        self.assertFalse(os.path.exists(scratch), "a dead caller's scratch directory was kept")

    def test_live_and_foreign_directories_kept(self):
        base = self.tmp
        mine = os.path.join(base, f"dmlbench-{os.getpid()}-abc")
        other = os.path.join(base, "dmlbench-notapid")
        for d in (mine, other):
            os.mkdir(d)
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = os.path.join(base, f"dmlbench-{dead.pid}-xyz")
        os.mkdir(stale)
        _cli.remove_stale_scratch(base)
        self.assertTrue(os.path.isdir(mine))
        self.assertTrue(os.path.isdir(other))
        self.assertFalse(os.path.exists(stale))


if __name__ == "__main__":
    unittest.main()
