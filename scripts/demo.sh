#!/usr/bin/env bash
# make demo: evaluate a raw-pixel baseline on the vendored Omniglot test classes,
# train a small embedding head on the training classes, evaluate it, and report.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/dmlbench}
OUT=${OUT:-out/demo}
mkdir -p "$OUT"

echo "== 1. Raw pixels (28×28, L2-normalised) of the 121 held-out Omniglot classes"
$BIN data export --dataset omniglot --split test --normalize --out "$OUT/pixels"
$BIN eval --emb "$OUT/pixels/emb.npy" --labels "$OUT/pixels/labels.npy"

if $BIN run --help >/dev/null 2>&1; then
	echo
	echo "== 2. Train a contrastive-loss MLP head (distance-weighted mining, SPC-2) on the 121 training classes"
	rm -rf "$OUT/runs"
	$BIN run --dataset omniglot --loss contrastive --miner distance --sampler spc-2 \
		--epochs "${EPOCHS:-8}" --seed 0 --out "$OUT/runs/contrastive-s0"
	echo
	echo "== 3. Report on the test classes: the untrained model, then the trained one"
	$BIN report "$OUT/runs" --format terminal --metrics R@1,R@2,NMI,mAP@C,MAP@R --source initial
	$BIN report "$OUT/runs" --format terminal --metrics R@1,R@2,NMI,mAP@C,MAP@R
fi
