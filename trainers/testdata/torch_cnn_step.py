#!/usr/bin/env python3
"""Time one DML training step of the CNN in PyTorch (CPU) for comparison
with `go test -bench TrainStepCNN ./trainers/` (BenchmarkTrainStepCNN), and
optionally one Omniglot-sized epoch.

Same network as `--arch cnn` (trainers/model/cnn.go), default channels 32,64:
input 1x28x28 -> [Conv3x3(pad 1) + bias -> MaxPool2 -> ReLU] x 2 -> flatten
(64*7*7 = 3136) -> Linear 128 -> L2 norm; He-uniform conv init. Batch 112
(SPC-2: 56 classes x 2), multi-similarity loss (Wang et al. 2019) with its
pair mining, Adam lr 1e-3, coupled weight decay 4e-4. One step = forward,
loss, backward, optimiser step (both forward once per step, see
trainers/model).

--epoch also times an Omniglot-sized epoch: `dmlbench run --dataset omniglot`
trains on 121 classes x 20 = 2420 images (22 steps of 112) and evaluates
the 2420 test images every epoch; here the epoch is those 22 steps plus an
embedding pass over 2420 images (the metrics themselves are not included,
so the comparison with dmlbench's epoch time, which includes them, is
conservative).

Usage: python3 torch_cnn_step.py [--threads 2] [--steps 30] [--epoch]
Debian: apt-get install -y python3-torch (1.13.1 in bookworm).
"""
import argparse
import time

import torch

from torch_step import make_step, set_threads, spc2_batches, time_steps


def make_model(channels=(32, 64), embed=128, side=28):
    layers, cin = [], 1
    for cout in channels:
        conv = torch.nn.Conv2d(cin, cout, 3, padding=1)
        torch.nn.init.kaiming_uniform_(conv.weight, a=0, nonlinearity="relu")  # U(+-sqrt(6/fan_in))
        torch.nn.init.zeros_(conv.bias)
        layers += [conv, torch.nn.MaxPool2d(2), torch.nn.ReLU()]
        cin, side = cout, side // 2
    layers += [torch.nn.Flatten(), torch.nn.Linear(cin * side * side, embed)]
    return torch.nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--epoch", action="store_true")
    args = ap.parse_args()
    set_threads(args.threads)
    torch.manual_seed(1)
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=4e-4)
    n, classes = 1120, 112
    x_all = torch.randn(n, 1, 28, 28).abs() / 3  # pixel-like, >= 0
    y_all = torch.arange(n) % classes
    step = make_step(model, opt, spc2_batches(x_all, y_all, classes))
    dt = time_steps(step, args.warmup, args.steps)
    print(f"torch {torch.__version__} threads={args.threads}: {dt * 1e3:.1f} ms/step "
          f"(CNN 1x28x28 conv 32,64 -> 128, batch 112, MS loss)")
    if args.epoch:
        test = torch.randn(2420, 1, 28, 28).abs() / 3
        t0 = time.perf_counter()
        for i in range((2420 + 111) // 112):
            step(i)
        with torch.no_grad():
            for s in range(0, len(test), 112):
                torch.nn.functional.normalize(model(test[s:s + 112]), dim=1)
        print(f"torch epoch (22 steps + embedding 2420 test images): {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
