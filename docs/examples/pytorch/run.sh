#!/usr/bin/env bash
# The PyTorch example end to end: export Omniglot's pixels at 14×14, tune both
# losses of tune.yaml (2 cells at once), write the table and the figure.
#   docs/examples/pytorch/run.sh [DMLBENCH_BINARY] [OUT]
# Needs python3 with torch and numpy (Debian: apt-get install python3-torch).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(realpath "${1:-$here/../../../bin/dmlbench}")"
out="${2:-$here/../../../runs/pytorch-example}"
data="$here/data"
# test_labels.npy is written last: an interrupted export is redone.
if [ ! -e "$data/test_labels.npy" ]; then
	"$bin" data export --dataset omniglot --size 14 --dir "$data" >/dev/null
fi
"$bin" tune "$here/tune.yaml" --out "$out" --parallel 2 --quiet
"$bin" report "$out" --format markdown --out "$here/report.md"
"$bin" plot tune "$out" --out "$here/tune.png"
cat "$here/report.md"
