#!/usr/bin/env bash
# One-time, idempotent set-up on Debian: system packages, faiss C API, Go modules.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
if [ -x scripts/install-faiss.sh ] || [ -f scripts/install-faiss.sh ]; then
	bash scripts/install-faiss.sh
fi
# Fashion-MNIST is optional: a missing mirror must not stop the rest.
bash scripts/install-datasets.sh || echo "setup: Fashion-MNIST not installed (optional; see scripts/install-datasets.sh)" >&2
go mod download
