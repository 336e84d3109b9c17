#!/usr/bin/env bash
# Regenerates docs/examples/: runs the two example suites (resumable: finished runs
# are skipped), copies their run.json files next to the figures, and renders the
# report in every format plus all figures. Needs a built binary (make build).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin/dmlbench}
EX=docs/examples/omniglot

[ -f out/omniglot-test/emb.npy ] || "$BIN" data export --dataset omniglot --split test --out out/omniglot-test
"$BIN" suite docs/examples/omniglot-suite.yaml
"$BIN" suite docs/examples/omniglot-dims-suite.yaml

# Keep only the run.json files (checkpoints stay under runs/, git-ignored).
rm -rf "$EX/runs" "$EX/runs-dims"
for pair in "runs/omniglot-example:$EX/runs" "runs/omniglot-dims:$EX/runs-dims"; do
	src=${pair%%:*} dst=${pair#*:}
	(cd "$src" && find . -name run.json) | while read -r f; do
		mkdir -p "$dst/$(dirname "$f")"
		cp "$src/$f" "$dst/$f"
	done
done

R="$EX/runs"
"$BIN" report "$R" --group-by loss,miner --format markdown --out "$EX/report-compact.md"
"$BIN" report "$R" --group-by loss,miner --baseline margin/distance --format markdown --out "$EX/report.md"
"$BIN" report "$R" --group-by loss,miner --baseline margin/distance --ci 0.95 --format terminal --color never --out "$EX/report.txt"
"$BIN" report "$R" --group-by loss,miner --baseline margin/distance --ci 0.95 --format latex --standalone --out "$EX/report.tex"
"$BIN" report "$R" --group-by loss,miner --baseline margin/distance --ci 0.95 --format csv --out "$EX/report.csv"
"$BIN" report "$R" --group-by loss,miner --metrics R@1,NMI --reference roth2020 --reference-dataset cub200 \
	--reference-rows 'Margin (D, β = 1.2);Triplet (D);Contrastive (D);Multisimilarity;Imagenet' \
	--format markdown --out "$EX/report-vs-roth2020.md"

"$BIN" plot spectrum "$R" --group-by loss,miner --top 64 --out "$EX/spectrum.png"
"$BIN" plot rho "$R" --group-by loss,miner --out "$EX/rho.png"
"$BIN" plot recall "$R" --group-by loss,miner --out "$EX/recall.png"
"$BIN" plot curves "$R" --group-by loss,miner --metric R@1 --out "$EX/curves.png"
"$BIN" plot sweep "$EX/runs-dims" --param embed-dim --group-by loss --metric R@1 --out "$EX/sweep-dims.png"
"$BIN" spectra --emb out/omniglot-test/emb.npy --labels out/omniglot-test/labels.npy --top 64 \
	--out "$EX/pixels-spectra.png" | tee "$EX/pixels-rho.txt"
