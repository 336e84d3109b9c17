"""In-loop overhead of dmlbench.evaluate over the CLI on the same arrays.

Times, interleaved, `dmlbench eval` on .npy files already on disk and
evaluate() on the same arrays in memory (which writes them and runs that
command); prints the median of each and of their difference.

    DMLBENCH_BIN=bin/dmlbench PYTHONPATH=python python3 python/bench_overhead.py [N D REPEATS]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import dmlbench


def main():
    n, d, reps = (int(v) for v in (sys.argv[1:] + ["20000", "128", "7"])[:3])
    rng = np.random.default_rng(0)
    y = rng.integers(0, n // 10, n)
    x = (rng.standard_normal((n // 10, d)) [y] + 0.5 * rng.standard_normal((n, d))).astype(np.float32)
    tmp = tempfile.mkdtemp()
    ep, lp = os.path.join(tmp, "e.npy"), os.path.join(tmp, "l.npy")
    np.save(ep, x)
    np.save(lp, y)
    metrics = "R@1,MAP@R"
    cmd = [dmlbench.find_binary(), "eval", "--emb", ep, "--labels", lp, "--metrics", metrics, "--format", "json", "--quiet"]
    cli, py = [], []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        cli.append(time.perf_counter() - t)
        t = time.perf_counter()
        dmlbench.evaluate(x, y, metrics=metrics)
        py.append(time.perf_counter() - t)
    # The part evaluate() adds, timed alone: conversion and writing of the
    # arrays, and reading back the JSON (load-independent of the k-NN).
    from dmlbench._cli import Scratch, embeddings_array, labels_array
    write = []
    for _ in range(reps):
        t = time.perf_counter()
        with Scratch() as s:
            s.emb("emb", embeddings_array(x, "x"))
            s.labels("labels", labels_array(y, "y"))
        write.append(time.perf_counter() - t)
    diff = [b - a for a, b in zip(cli, py)]
    print(f"{n}×{d}, {reps} interleaved pairs: CLI median {statistics.median(cli):.3f} s, "
          f"evaluate() median {statistics.median(py):.3f} s, overhead median {statistics.median(diff):.3f} s "
          f"(min {min(diff):.3f}, max {max(diff):.3f}); writing the arrays alone: median {statistics.median(write)*1000:.1f} ms")


if __name__ == "__main__":
    main()
