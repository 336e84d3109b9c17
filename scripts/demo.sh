#!/usr/bin/env bash
# make demo: evaluate a raw-pixel baseline on the vendored Omniglot test classes,
# train a small embedding head on the training classes, evaluate it, and say
# what the numbers mean.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/dmlbench}
OUT=${OUT:-out/demo}
EPOCHS=${EPOCHS:-8}
mkdir -p "$OUT"

# pct FILE SECTION METRIC: METRIC of the JSON object SECTION ("metrics", "initial", "final") in %.
pct() {
	awk -v sec="\"$2\"" -v key="\"$3\"" '
		index($0, sec ":") { in_sec = 1; next }
		in_sec && index($0, key ":") { v = $0; sub(/.*: */, "", v); sub(/,.*/, "", v); printf "%.2f", 100 * v; exit }
		in_sec && /^ *}/ { in_sec = 0 }' "$1"
}

echo "== 1. Baseline: raw pixels (28×28, L2-normalised) of the 121 held-out Omniglot classes"
$BIN data export --dataset omniglot --split test --normalize --out "$OUT/pixels"
$BIN eval --emb "$OUT/pixels/emb.npy" --labels "$OUT/pixels/labels.npy" --metrics R@1,R@2,R@4,NMI,F1,mAP@C,MAP@R
$BIN eval --emb "$OUT/pixels/emb.npy" --labels "$OUT/pixels/labels.npy" --metrics R@1,NMI,MAP@R --format json >"$OUT/pixels/eval.json"

echo
echo "== 2. Train a contrastive-loss MLP head (distance-weighted mining, SPC-2 batches) on the 121 training classes"
rm -rf "$OUT/runs"
$BIN run --dataset omniglot --loss contrastive --miner distance --sampler spc-2 \
	--epochs "$EPOCHS" --seed 0 --out "$OUT/runs/contrastive-s0"

echo
echo "== 3. The same test classes through the head, before training (initial) and after (final)"
$BIN report "$OUT/runs" --format terminal --metrics R@1,R@2,NMI,mAP@C,MAP@R --source initial
$BIN report "$OUT/runs" --format terminal --metrics R@1,R@2,NMI,mAP@C,MAP@R

run="$OUT/runs/contrastive-s0/run.json"
px=$(pct "$OUT/pixels/eval.json" metrics R@1)
r0=$(pct "$run" initial R@1)
r1=$(pct "$run" final R@1)
m0=$(pct "$run" initial MAP@R)
m1=$(pct "$run" final MAP@R)
echo
echo "What this shows: on classes never seen in training, the trained head finds a same-class"
echo "nearest neighbour for ${r1} % of test images (R@1), up from ${r0} % untrained and ${px} % for raw"
echo "pixels, and MAP@R (the ranking of all same-class items) rises from ${m0} % to ${m1} %."
echo "The untrained head scores below raw pixels because a random 784→128 projection loses"
echo "information. The training loss stays near 1.0 while R@1 rises: it adds the positive-pair"
echo "distance, which falls, to a hinge on negatives that distance-weighted mining draws ever"
echo "closer as the embedding improves; judge training by held-out R@1, not by the loss."
