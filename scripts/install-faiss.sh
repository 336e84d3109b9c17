#!/usr/bin/env bash
# install-faiss.sh — install faiss (CPU) and its C API for `go build -tags faiss`.
#
# Debian 12 (bookworm) ships libfaiss-dev 1.7.3 (static libfaiss.a + headers,
# including faiss/c_api/*.h) but no compiled C API. This script, run as root:
#   1. apt-get installs libfaiss-dev, libopenblas-dev and g++;
#   2. enables a deb-src entry for the configured Debian mirror (file
#      /etc/apt/sources.list.d/dmlbench-deb-src.sources) and downloads the
#      faiss *source* package of exactly the installed libfaiss-dev version;
#   3. compiles its c_api/ sources (not c_api/gpu) with
#      -O2 -fPIC -fopenmp -std=gnu++17 -DNDEBUG against the installed headers;
#   4. links them with libfaiss.a into /usr/local/lib/libfaiss_c.so and runs
#      ldconfig; the version is stamped in /usr/local/lib/libfaiss_c.stamp.
# Idempotent: when the stamp matches the installed libfaiss-dev it exits at
# once without output. Quiet on success (one line after a real install); on
# failure it prints one error line and the tail of the build log.
#
# Usage: sudo bash scripts/install-faiss.sh        (called by `make faiss`)
#        FAISS_FORCE=1 bash scripts/install-faiss.sh   rebuild even if stamped
set -euo pipefail

# Bump when the build recipe below changes, so stamped installs are rebuilt.
RECIPE=1
LIBDIR=/usr/local/lib
LIB=$LIBDIR/libfaiss_c.so
STAMP=$LIBDIR/libfaiss_c.stamp
SRCLIST=/etc/apt/sources.list.d/dmlbench-deb-src.sources
PKGS=(libfaiss-dev libopenblas-dev g++)

die() {
	echo "install-faiss.sh: $*" >&2
	exit 1
}

# --- platform checks (one clear line each) -----------------------------------
os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-}") || os_id=
os_code=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || os_code=
if [ "$os_id" != debian ] || [ "$os_code" != bookworm ]; then
	die "needs Debian 12 (bookworm) with apt; this is '${os_id:-unknown} ${os_code}'. Install faiss 1.7.x with its C API (libfaiss_c) yourself, or build without -tags faiss."
fi
[ "$(id -u)" = 0 ] || die "must run as root (it apt-get installs packages and writes $LIBDIR)."
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

# status: "<pkg> <ii> <version>" for each wanted package that dpkg knows.
pkg_status() {
	dpkg-query -W -f='${Package} ${db:Status-Abbrev}${Version}\n' "${PKGS[@]}" 2>/dev/null || true
}
all_installed() { # every package in PKGS is in state "ii"
	pkg_status | awk -v want="${PKGS[*]}" '
		$2 == "ii" && $3 != "" { ok[$1] = 1 }
		END { n = split(want, w, " "); for (i = 1; i <= n; i++) if (!ok[w[i]]) exit 1 }'
}
faiss_version() { dpkg-query -W -f='${Version}' libfaiss-dev 2>/dev/null; }
stamp_for() { echo "libfaiss-dev=$1 arch=$arch recipe=$RECIPE"; }

# --- fast path: nothing to do -------------------------------------------------
up_to_date() {
	[ -z "${FAISS_FORCE:-}" ] && [ -f "$LIB" ] && [ -f "$STAMP" ] && all_installed &&
		[ "$(cat "$STAMP")" = "$(stamp_for "$(faiss_version)")" ]
}
up_to_date && exit 0

# Serialise concurrent runs (parallel make targets, two CI jobs on one host);
# a run that waited finds the work done.
exec 9>/var/lock/dmlbench-install-faiss.lock
flock 9
up_to_date && exit 0
start=$(date +%s)
work=$(mktemp -d /tmp/install-faiss.XXXXXX)
log=$work/build.log
trap 'rm -rf "$work"' EXIT

# step NAME CMD...: run CMD with output to the log; on failure report and exit.
step() {
	local name=$1
	shift
	echo "+ $*" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		echo "install-faiss.sh: $name failed; last lines of the log:" >&2
		tail -n 25 "$log" | sed 's/^/  | /' >&2
		exit 1
	fi
}

export DEBIAN_FRONTEND=noninteractive
# Wait up to 10 min for another apt/dpkg run to release its lock instead of failing.
APT=(apt-get -qq -o=Dpkg::Use-Pty=0 -o=APT::Install-Recommends=false -o=DPkg::Lock::Timeout=600)

# --- 1. binary packages -------------------------------------------------------
if ! all_installed; then
	# Try with the current package lists first; refresh them only if needed.
	if ! "${APT[@]}" install -y "${PKGS[@]}" >>"$log" 2>&1; then
		step "apt-get update" "${APT[@]}" update
		step "apt-get install ${PKGS[*]}" "${APT[@]}" install -y "${PKGS[@]}"
	fi
fi
ver=$(faiss_version)
[ -n "$ver" ] || die "libfaiss-dev did not install."
src_pkg=$(dpkg-query -W -f='${source:Package}' libfaiss-dev)
src_ver=$(dpkg-query -W -f='${source:Version}' libfaiss-dev)
libfaiss_a=/usr/lib/$multiarch/libfaiss.a
[ -f "$libfaiss_a" ] || libfaiss_a=$(dpkg -L libfaiss-dev | grep '/libfaiss\.a$' | head -n1)
[ -f "$libfaiss_a" ] || die "libfaiss-dev $ver has no libfaiss.a."
[ -f /usr/include/faiss/c_api/faiss_c.h ] || die "libfaiss-dev $ver has no faiss/c_api headers."

# --- 2. source package --------------------------------------------------------
# The configured mirror for the release suite: deb822 .sources stanzas or
# one-line .list entries. Falls back to deb.debian.org.
mirror_and_key() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$SRCLIST" ] || continue
		awk -v suite="$os_code" '
			function flush() {
				if (types ~ /(^|[ \t])deb([ \t]|$)/ && (" " suites " ") ~ ("[ \t]" suite "[ \t]") && uris != "" && enabled != "no")
					{ split(uris, u, /[ \t]+/); print u[1], key; found = 1; exit }
				types = suites = uris = key = enabled = ""
			}
			/^[ \t]*$/ { flush(); next }
			/^[ \t]*#/ { next }
			{ line = $0; sub(/^[^:]*:[ \t]*/, "", line); name = tolower($1); sub(/:$/, "", name)
			  if (name == "types") types = line; else if (name == "suites") suites = line
			  else if (name == "uris") uris = line; else if (name == "signed-by") key = line
			  else if (name == "enabled") enabled = tolower(line) }
			END { if (!found) flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$os_code" '
			$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			              if ($(i + 1) == suite) { print $i; exit } }' "$f"
	done
	echo "http://deb.debian.org/debian"
}
read -r mirror key < <(mirror_and_key | head -n1)

fetch_source() {
	(cd "$work" && "${APT[@]}" source --download-only "$src_pkg=$src_ver")
}
if ! fetch_source >>"$log" 2>&1; then
	{
		echo "# Added by dmlbench scripts/install-faiss.sh: Debian source packages"
		echo "# (faiss's C API is built from the faiss source package)."
		echo "Types: deb-src"
		echo "URIs: $mirror"
		echo "Suites: $os_code"
		echo "Components: main"
		[ -z "$key" ] || echo "Signed-By: $key"
	} >"$SRCLIST"
	step "apt-get update (deb-src $mirror $os_code)" "${APT[@]}" update
	step "apt-get source $src_pkg=$src_ver" fetch_source
fi
orig=$(ls "$work"/"${src_pkg}"_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -n1)
[ -n "$orig" ] || die "no orig tarball in the downloaded $src_pkg $src_ver source package."

# --- 3. compile c_api ----------------------------------------------------------
mkdir -p "$work/src" "$work/obj"
step "extract c_api from $(basename "$orig")" tar -xf "$orig" -C "$work/src" --wildcards '*/c_api/*'
capi=$(find "$work/src" -type d -name c_api | head -n1)
[ -n "$capi" ] || die "no c_api directory in $(basename "$orig")."
# Debian patches touching c_api (none in 1.7.3-2) are applied when present
# (a patch that also touches files outside c_api/ would fail here, loudly).
deb_tar=$(ls "$work"/"${src_pkg}"_*.debian.tar.* 2>/dev/null | grep -v '\.asc$' | head -n1)
if [ -n "$deb_tar" ]; then
	mkdir -p "$work/deb"
	step "extract debian/ patches" tar -xf "$deb_tar" -C "$work/deb"
	if [ -f "$work/deb/debian/patches/series" ]; then
		while read -r p _; do
			case "$p" in '' | \#*) continue ;; esac
			if grep -q '^+++ .*c_api/' "$work/deb/debian/patches/$p"; then
				step "apply Debian patch $p" patch -d "$(dirname "$capi")" -p1 -s --no-backup-if-mismatch -i "$work/deb/debian/patches/$p"
			fi
		done <"$work/deb/debian/patches/series"
	fi
fi
find "$capi" -name '*.cpp' -not -path '*/gpu/*' | sort >"$work/sources"
[ -s "$work/sources" ] || die "no C API sources found in $(basename "$orig")."
export CXXFLAGS_S="-O2 -fPIC -fopenmp -std=gnu++17 -DNDEBUG -I/usr/include -w" capi work
compile_all() { # each c_api/<dir>/<f>.cpp -> obj/<dir>_<f>.cpp.o, nproc at a time
	xargs -P "$(nproc 2>/dev/null || echo 2)" -n 1 bash -c \
		'rel=${0#"$capi"/}; exec g++ $CXXFLAGS_S -c "$0" -o "$work/obj/${rel//\//_}.o"' <"$work/sources"
}
step "compile faiss C API ($(wc -l <"$work/sources") files)" compile_all

# --- 4. link, install, stamp -----------------------------------------------------
step "link libfaiss_c.so" g++ -shared -o "$work/libfaiss_c.so" -Wl,-soname,libfaiss_c.so "$work"/obj/*.o \
	"$libfaiss_a" -Wl,--exclude-libs,libfaiss.a -lopenblas -fopenmp -Wl,--no-undefined
step "check the C API symbols" bash -c "nm -D --defined-only '$work/libfaiss_c.so' | grep -q ' T faiss_IndexFlatL2_new_with'"
mkdir -p "$LIBDIR"
install -m 0755 "$work/libfaiss_c.so" "$LIB.tmp.$$"
mv -f "$LIB.tmp.$$" "$LIB"
stamp_for "$ver" >"$STAMP"
step ldconfig ldconfig
echo "install-faiss.sh: installed $LIB (faiss $ver C API, $(wc -l <"$work/sources") sources) in $(($(date +%s) - start)) s"
