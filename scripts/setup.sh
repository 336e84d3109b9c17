#!/usr/bin/env bash
# One-time, idempotent set-up on Debian: system packages, faiss C API, Go modules.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
if [ -x scripts/install-faiss.sh ] || [ -f scripts/install-faiss.sh ]; then
	bash scripts/install-faiss.sh
fi
# Headless Chromium renders dmlbench show's page in its test (skipped without it).
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
fi
# pdflatex compiles every LaTeX table in the tests (one- and two-column layouts, lmodern
# for --standalone); pdffonts checks the fonts of the PDFs (skipped without them).
if ! command -v pdflatex >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		texlive-latex-base texlive-latex-recommended texlive-fonts-recommended lmodern poppler-utils ||
		echo "setup: texlive not installed; the LaTeX compile tests skip without pdflatex" >&2
fi
# bubblewrap runs tuning commands with the test split out of reach (tune's
# isolate: true; its test is skipped without it).
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap || echo "setup: bubblewrap not installed; tune's isolate: true needs it" >&2
fi
# Data sets are not installed here: Omniglot is embedded, and the commands that
# need Fashion-MNIST (make test, make datasets) install it themselves.
go mod download
# numpy for the Python package's tests (python/, make test-python).
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null && command -v apt-get >/dev/null; then
	apt-get install -y python3-numpy || echo "setup: python3-numpy not installed; make test-python needs it" >&2
fi
