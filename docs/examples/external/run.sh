#!/usr/bin/env bash
# Runs the example end to end: export Omniglot's pixels (14×14) as features,
# tune both methods of tune.yaml, print the table. Usage:
#   docs/examples/external/run.sh [DMLBENCH_BINARY] [OUT]
# Needs python3 with numpy (Debian: apt-get install python3-numpy).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(realpath "${1:-$here/../../../bin/dmlbench}")"
out="${2:-$here/../../../runs/external-example}"
data="$here/data"
# test_labels.npy is written last: an interrupted export is redone.
if [ ! -e "$data/test_labels.npy" ]; then
	"$bin" data export --dataset omniglot --size 14 --dir "$data" >/dev/null
fi
"$bin" tune "$here/tune.yaml" --out "$out" --parallel 2 --quiet
"$bin" report "$out" --format markdown
