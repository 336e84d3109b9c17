#!/usr/bin/env bash
# Installs the optional data sets that Debian packages, idempotently:
#   Fashion-MNIST  (package dataset-fashion-mnist, ~30 MB)
#                  -> /usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz
# Needs root on Debian (bookworm or later). Elsewhere, download the four IDX
# .gz files from https://github.com/zalandoresearch/fashion-mnist into a
# directory and point dmlbench at it ($DMLBENCH_DATA/fashion-mnist or the
# dataset path option). Omniglot is embedded in the binary; the emoji set is
# read from ../shared/data/emoji or $DMLBENCH_DATA/emoji.
set -euo pipefail

PKG=dataset-fashion-mnist
DIR=/usr/share/datasets/fashion-mnist
FILES=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz)

have_all() {
	local f
	for f in "${FILES[@]}"; do
		[ -s "$DIR/$f" ] || return 1
	done
}

if have_all; then
	echo "fashion-mnist: already installed in $DIR"
	exit 0
fi

if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-datasets: this script needs Debian's apt-get (package $PKG)." >&2
	echo "  Otherwise download the four Fashion-MNIST IDX .gz files from" >&2
	echo "  https://github.com/zalandoresearch/fashion-mnist into \$DMLBENCH_DATA/fashion-mnist." >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-datasets: must run as root to install $PKG (try: sudo $0)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# apt's progress goes to a log; on failure its tail is shown.
LOG=${TMPDIR:-/tmp}/dmlbench-install-datasets.log
: >"$LOG"
trap 'st=$?; if [ $st -ne 0 ]; then echo "install-datasets: failed; last lines of $LOG:" >&2; tail -n 15 "$LOG" >&2; fi' EXIT
if ! apt-cache show "$PKG" >/dev/null 2>&1; then
	apt-get update -q >>"$LOG" 2>&1
fi
if ! apt-cache show "$PKG" >/dev/null 2>&1; then
	echo "install-datasets: apt knows no package $PKG (Debian bookworm main has it; check /etc/apt/sources.list*)" >&2
	exit 1
fi
if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "install ok installed"; then
	# installed but files missing: restore them
	apt-get install -y -q --reinstall "$PKG" >>"$LOG" 2>&1
else
	apt-get install -y -q --no-install-recommends "$PKG" >>"$LOG" 2>&1
fi

if ! have_all; then
	echo "install-datasets: $PKG is installed but $DIR lacks some of: ${FILES[*]}" >&2
	exit 1
fi
echo "fashion-mnist: installed in $DIR (apt log: $LOG)"
