"""Running the dmlbench binary and handing it arrays as temporary files."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np


class DmlbenchError(ValueError):
    """The dmlbench binary refused its input or failed.

    ``message`` is the binary's one-line error, ``returncode`` its exit
    status and ``command`` the argument list that was run.
    """

    def __init__(self, message, returncode=None, command=None):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.command = command


class BinaryNotFoundError(FileNotFoundError):
    """No dmlbench binary in DMLBENCH_BIN or on PATH."""


def find_binary():
    """Path of the dmlbench binary: $DMLBENCH_BIN, else ``dmlbench`` on PATH."""
    env = os.environ.get("DMLBENCH_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise BinaryNotFoundError(f"DMLBENCH_BIN={env} is not an executable file")
        return env
    found = shutil.which("dmlbench")
    if found is None:
        raise BinaryNotFoundError(
            "dmlbench binary not found: set DMLBENCH_BIN or put dmlbench on PATH "
            "(`make build` writes bin/dmlbench)")
    return found


def to_numpy(x, what, dtype=None):
    """x (numpy array, torch tensor on any device, or sequence) as numpy.

    Tensors are detached and copied to the host; half-precision values are
    widened to float32 first, since numpy has no bfloat16.
    """
    if hasattr(x, "detach") and hasattr(x, "cpu") and type(x).__module__.startswith("torch"):
        t = x.detach()
        if t.is_floating_point() and t.element_size() < 4:
            t = t.float()
        x = t.cpu().numpy()
    try:
        a = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise DmlbenchError(f"{what}: cannot be read as an array ({e})") from None
    return a


def embeddings_array(x, what):
    """Embeddings as a C-contiguous float32 N×D array (1-D: N×1)."""
    a = to_numpy(x, what)
    if a.dtype == object or a.dtype.kind not in "fiub":
        raise DmlbenchError(f"{what}: want a numeric array, got dtype {a.dtype}")
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise DmlbenchError(f"{what}: want a 2-D array (N×D), got shape {tuple(a.shape)}")
    # float32 is what the binary scores; numpy's cast rounds to nearest as the binary's does.
    return np.ascontiguousarray(a, dtype=np.float32)


def labels_array(y, what):
    """Labels as a 1-D int64 array, or a 1-D array of str for string labels."""
    a = to_numpy(y, what)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.ndim != 1:
        raise DmlbenchError(f"{what}: want a 1-D array of labels, got shape {tuple(a.shape)}")
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise DmlbenchError(f"{what}: float labels must be whole numbers (class ids)")
        return a.astype(np.int64)
    if a.dtype.kind in "USO":
        s = a.astype(str)
        if any("\n" in v for v in s):
            raise DmlbenchError(f"{what}: a string label holds a line break")
        return s
    raise DmlbenchError(f"{what}: labels of dtype {a.dtype} are neither integers nor strings")


def class_ids(*sources):
    """Labels of one class space as shared int64 class ids, and the class names.

    sources: (what, labels) pairs, labels as labels_array returns them.
    Integer labels pass unchanged (names None). String labels are matched
    exactly, as Python compares them: "c0" and "c0 ", "01" and "1" are
    distinct classes (the binary's text rules trim and read integers, so
    the strings never reach it). Ids follow the names' order: by value
    when every name is an integer, code point order otherwise.
    """
    text = [what for what, a in sources if a.dtype.kind == "U"]
    if not text:
        return [a for _, a in sources], None
    if len(text) < len(sources):
        ints = next(what for what, a in sources if a.dtype.kind != "U")
        raise DmlbenchError(f"{ints} holds integer labels but {text[0]} holds strings: "
                            "use integers in both or strings in both")
    names, inv = np.unique(np.concatenate([a for _, a in sources]), return_inverse=True)
    try:
        keys = [(int(v), v) for v in names.tolist()]
    except ValueError:
        keys = None
    if keys is not None:
        order = sorted(range(len(names)), key=keys.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(len(names))
        names, inv = names[order], rank[inv.reshape(-1)]
    ids, start = [], 0
    for _, a in sources:
        ids.append(inv[start:start + len(a)].astype(np.int64))
        start += len(a)
    return ids, names.tolist()


def name_classes(res, names):
    """Puts the class names back into eval's per-class entries (ids → names)."""
    if names is not None:
        for c in res.get("per_class") or ():
            c["class"] = names[int(c["class"])]
    return res


def _scratch_dir():
    # Memory-backed when the system has it: the arrays are read once.
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        return shm
    return None


_PREFIX = "dmlbench-"


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def remove_stale_scratch(base=None):
    """Removes the scratch directories of dead processes.

    A directory is named ``dmlbench-PID-…`` after the process that made it;
    a process killed before it could clean up (an out-of-memory kill, a
    notebook restart) leaves its arrays behind, in memory when the base is
    /dev/shm. Only this user's directories are touched.
    """
    base = base or _scratch_dir() or tempfile.gettempdir()
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        if not name.startswith(_PREFIX):
            continue
        pid = name[len(_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
            continue
        path = os.path.join(base, name)
        try:
            if os.lstat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


class Scratch:
    """A temporary directory holding the arrays of one call."""

    def __enter__(self):
        remove_stale_scratch()
        self.dir = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=_scratch_dir())
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)

    def emb(self, name, a):
        p = os.path.join(self.dir, name + ".npy")
        np.save(p, a, allow_pickle=False)
        return p

    def labels(self, name, a):
        if a.dtype.kind == "U":
            p = os.path.join(self.dir, name + ".txt")
            with open(p, "w", encoding="utf-8") as f:
                f.write("\n".join(a.tolist()) + "\n")
            return p
        p = os.path.join(self.dir, name + ".npy")
        np.save(p, a, allow_pickle=False)
        return p

    def rows(self, name, a):
        p = os.path.join(self.dir, name + ".npy")
        np.save(p, np.asarray(a, dtype=np.int64), allow_pickle=False)
        return p


def _die_with_parent(parent):
    """In the child, before exec: be killed when the calling thread dies.

    Linux's parent-death signal; elsewhere nothing (the child then runs to
    its end). A parent already gone when this runs means the same.
    """
    def preexec():
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return preexec if sys.platform.startswith("linux") else None


def run_json(args):
    """Runs ``dmlbench ARGS --format json --quiet`` and returns its JSON.

    The binary dies with this process (a killed kernel or script leaves no
    evaluation running).
    """
    cmd = [find_binary()] + list(args) + ["--format", "json", "--quiet"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       preexec_fn=_die_with_parent(os.getpid()))
    if p.returncode != 0:
        lines = [l.strip() for l in p.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
        msg = lines[-1] if lines else f"dmlbench exited with status {p.returncode}"
        raise DmlbenchError(msg, p.returncode, cmd)
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise DmlbenchError(f"dmlbench printed no JSON ({e})", p.returncode, cmd) from None
