#!/usr/bin/env bash
# gpu-check.sh DIR — the GPU backend's checks on a CUDA machine, one report.
#
# Runs from the repository root with binaries built elsewhere (the device
# machine needs no Go toolchain and no network): `make gpu-check-build`
# writes bin/gpu-check/dmlbench and bin/gpu-check/gpu.test (CGO_ENABLED=0).
# Steps, each with its own time limit (345 s in all, so the script ends
# within 6 minutes even when every step runs into its limit):
#
#   1. ptxas on knn/gpu/kernels.ptx for the device's architecture (skipped
#      when no ptxas is installed: the driver's JIT then is the only check);
#   2. bin/gpu-check/dmlbench version (the GPU line must name a device);
#   3. the device tests (TestDevice*; the speed runs skip here), with the
#      CPU references on the single-chain FMA kernels (DMLBENCH_KERNEL=avx2):
#      TestDeviceMatchesEmulation, TestDeviceParity, TestDeviceMetrics (every
#      metric, gpu vs exact, three conventions), TestDeviceAssign,
#      TestDeviceKMeans;
#   4. the speed runs with the CPU's best kernels (TestDeviceSpeed,
#      DMLBENCH_GPU_BENCH=1): the SOP-size full suite (60 502 × 128, 11 318
#      classes) with gpu and with exact, per stage; the 1M × 128 gallery with
#      10 000 queries, k = 100, three runs, ids of the first 1 000 queries
#      against exact;
#   5. the PyTorch anchor on the same GPU (knn/gpu/testdata/torch_anchor.py:
#      torch.cdist + topk in FP32, TF32 off), when python3 has torch with CUDA.
#
# Everything goes to DIR/gpu-check-report.txt (the 1M-row arrays of step 5 go
# to a scratch folder that is removed). The exit status is 0 when every check
# that ran passed; without a CUDA device the script stops after step 2 with
# "no CUDA device: <reason>" and status 2.
set -u -o pipefail

if [ $# -ne 1 ]; then
	echo "usage: scripts/gpu-check.sh DIR   (run from the repository root after make gpu-check-build)" >&2
	exit 64
fi
out=$1
mkdir -p "$out" || exit 1
report=$out/gpu-check-report.txt
: >"$report" || exit 1
failed=0

log() { printf '%s\n' "$*" | tee -a "$report"; }

# step NAME LIMIT CMD...: runs CMD under a time limit, appends its output to
# the report and records PASS, FAIL (status) or TIMEOUT.
step() {
	local name=$1 limit=$2
	shift 2
	log ""
	log "== $name (limit ${limit}s): $*"
	local t0=$SECONDS rc
	timeout --kill-after=5 "$limit" "$@" >>"$report" 2>&1
	rc=$?
	local dt=$((SECONDS - t0))
	case $rc in
	0) log "-- $name: PASS (${dt}s)" ;;
	124 | 137) log "-- $name: TIMEOUT after ${dt}s"; failed=1 ;;
	*) log "-- $name: FAIL (status $rc, ${dt}s)"; failed=1 ;;
	esac
	return $rc
}

for f in bin/gpu-check/dmlbench bin/gpu-check/gpu.test knn/gpu/kernels.ptx; do
	if [ ! -e "$f" ]; then
		log "gpu-check: $f is missing: build the binaries first (make gpu-check-build) and run from the repository root"
		exit 1
	fi
done

log "dmlbench gpu-check, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
log "commit: $(cat bin/gpu-check/COMMIT 2>/dev/null || echo unknown)"
log "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores)"
if command -v nvidia-smi >/dev/null 2>&1; then
	log "nvidia-smi -L: $(nvidia-smi -L 2>&1 | tr '\n' ' ')"
	log "driver: $(nvidia-smi --query-gpu=driver_version,compute_cap,memory.total --format=csv,noheader 2>&1 | tr '\n' ' ')"
else
	log "nvidia-smi: not installed"
fi

# 1. ptxas, for the device's compute capability (sm_90 when unknown).
arch=sm_90
if command -v nvidia-smi >/dev/null 2>&1; then
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
	[ -n "$cc" ] && arch=sm_$cc
fi
ptxas_bin=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
if [ -n "$ptxas_bin" ]; then
	step "ptxas $arch" 30 "$ptxas_bin" -arch="$arch" knn/gpu/kernels.ptx -o /dev/null
else
	log ""
	log "== ptxas: SKIP (no ptxas on this machine; the driver JIT-compiles the PTX in step 3)"
fi

# 2. version: the GPU line says whether there is a device.
step "dmlbench version" 15 bin/gpu-check/dmlbench version
gpu_line=$(bin/gpu-check/dmlbench version 2>&1 | grep '^GPU:' || true)
if [ -z "$gpu_line" ] || [[ $gpu_line == "GPU: none"* ]]; then
	reason=${gpu_line#GPU: none (}
	reason=${reason%)}
	[ -n "$reason" ] || reason="no CUDA device: dmlbench version printed no GPU line"
	log ""
	log "gpu-check: $reason"
	log "gpu-check: stopped before the device tests (report: $report)"
	exit 2
fi

# 3. Device tests: parity against the CPU's single-chain FMA kernels.
step "device tests" 120 env DMLBENCH_KERNEL=avx2 bin/gpu-check/gpu.test -test.v -test.count=1 -test.timeout 115s \
	-test.run '^TestDevice'

# 4. Speed runs with the CPU's best kernels; the 1M-row arrays for step 5
# go to a scratch folder.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
step "speed runs" 120 env DMLBENCH_GPU_BENCH=1 DMLBENCH_GPU_OUT="$scratch" bin/gpu-check/gpu.test -test.v -test.count=1 \
	-test.timeout 115s -test.run '^TestDeviceSpeed$'

# 5. PyTorch anchor on the same GPU.
py=$(command -v python3 || true)
if [ -n "$py" ] && "$py" -c 'import torch, numpy, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	if [ -e "$scratch/gallery.npy" ]; then
		step "torch.cdist+topk anchor" 60 "$py" knn/gpu/testdata/torch_anchor.py "$scratch" 100 1000
	else
		log ""
		log "== torch anchor: SKIP (the speed runs wrote no arrays)"
	fi
else
	log ""
	log "== torch anchor: SKIP (python3 with torch and CUDA not available here)"
fi

summary=$(grep -E '^-- |: SKIP|SOP-size suite|1M×128 gallery|torch.cdist\+topk FP32 run|ids identical in|disagreeing slots' "$report" || true)
log ""
log "== summary"
log "$summary"
if [ $failed -ne 0 ]; then
	log "gpu-check: FAILED (report: $report)"
	exit 1
fi
log "gpu-check: all checks passed (report: $report)"
