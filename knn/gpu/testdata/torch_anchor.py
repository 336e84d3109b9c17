"""PyTorch anchor for the GPU k-NN timings (docs/gpu.md).

Reads DIR/gallery.npy, DIR/queries.npy and DIR/gpu_ids.npy (written by
TestDeviceSpeed with DMLBENCH_GPU_OUT=DIR), runs torch.cdist + topk in FP32
(TF32 off) in query chunks on the GPU, and prints the time per run and how
often its neighbour ids agree with dmlbench's gpu backend. cuBLAS sums in an
unspecified order, so a few near-tied neighbours may differ; for every
disagreeing slot the script checks in float64 that the two ids are at
distances equal to within float32 rounding.

usage: python3 torch_anchor.py DIR [k] [chunk]
"""
import sys
import time

import numpy as np
import torch

d = sys.argv[1]
k = int(sys.argv[2]) if len(sys.argv) > 2 else 100
chunk = int(sys.argv[3]) if len(sys.argv) > 3 else 1000

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")
g_np = np.load(f"{d}/gallery.npy")
q_np = np.load(f"{d}/queries.npy")
g = torch.from_numpy(g_np).to(dev)
q = torch.from_numpy(q_np).to(dev)
print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; gallery {tuple(g.shape)}, queries {tuple(q.shape)}, k={k}, chunk={chunk}")


def search():
    ids = torch.empty((q.shape[0], k), dtype=torch.int64, device=dev)
    for s in range(0, q.shape[0], chunk):
        dist = torch.cdist(q[s:s + chunk], g) ** 2
        ids[s:s + chunk] = torch.topk(dist, k, dim=1, largest=False, sorted=True).indices
    return ids


search()  # warm-up (cuBLAS handles, allocator)
torch.cuda.synchronize()
for rep in range(3):
    t0 = time.perf_counter()
    ids = search()
    torch.cuda.synchronize()
    print(f"torch.cdist+topk FP32 run {rep}: {time.perf_counter() - t0:.3f}s")

ours = np.load(f"{d}/gpu_ids.npy").reshape(q_np.shape[0], k)
theirs = ids.cpu().numpy()
same = (ours == theirs).mean()
print(f"ids identical in {100 * same:.3f}% of slots")
bad = 0
for i, j in zip(*np.nonzero(ours != theirs)):
    a = ((q_np[i].astype(np.float64) - g_np[ours[i, j]]) ** 2).sum()
    b = ((q_np[i].astype(np.float64) - g_np[theirs[i, j]]) ** 2).sum()
    if abs(a - b) > 1e-5 * (1 + abs(a)):
        bad += 1
print(f"disagreeing slots whose float64 distances differ beyond float32 rounding: {bad}")
