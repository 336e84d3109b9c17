# dmlbench — see README.md. `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
export GOFLAGS := -buildvcs=false
GO ?= go
BIN := bin/dmlbench

.PHONY: all setup datasets build test test-kernels test-python test-external-example test-slurm test-slurm-locked test-short bench demo lint check-generate faiss fuzz fault clean gpu-check-build gpu-check

all: build

setup:
	bash scripts/setup.sh

# Optional data sets packaged by Debian (Fashion-MNIST); the tests that read
# it skip with a message when it is missing.
datasets:
	bash scripts/install-datasets.sh || echo "datasets: Fashion-MNIST not installed (optional; see scripts/install-datasets.sh)" >&2

# The binary gets the faiss backends when scripts/install-faiss.sh has run.
TAGS := $(shell test -e /usr/local/lib/libfaiss_c.so && echo faiss)

build:
	$(GO) build -tags "$(TAGS)" -o $(BIN) ./cmd/dmlbench

demo: setup build
	bash scripts/demo.sh

test: setup datasets lint
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -timeout 30m -tags faiss ./knn/... ./clustering/... ./metrics/... ./cmd/...
	$(MAKE) --no-print-directory test-kernels
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-external-example
	$(MAKE) --no-print-directory test-slurm

# The packages whose numbers come from the k-NN and k-means kernels, run
# once more under every other kernel level this CPU has (internal/kernelsel;
# the run above used the best): their tests hold the same values at every
# level, so any level that rounded differently fails them.
KERNEL_PKGS := ./knn/... ./clustering/... ./metrics/...

test-kernels:
	@for l in $$($(GO) run ./internal/kernelsel/levels -others); do \
		echo "test-kernels: DMLBENCH_KERNEL=$$l $(KERNEL_PKGS)"; \
		DMLBENCH_KERNEL=$$l $(GO) test -count=1 -timeout 30m $(KERNEL_PKGS) || exit 1; \
	done

# The Python package (python/dmlbench) against this checkout's binary; the
# torch cases skip where torch is absent. Debian's python3 has the numpy
# that scripts/setup.sh installs.
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
test-python: build
	DMLBENCH_BIN=$(CURDIR)/$(BIN) PYTHONPATH=$(CURDIR)/python:$(CURDIR)/python/tests \
		$(PYTHON) -m unittest discover -s python/tests -t python/tests

# docs/examples/external end to end: a numpy trainer's two losses tuned by
# command cells (under a minute on a busy 2-core machine).
test-external-example: build
	rm -rf out/external-example
	PATH=$(dir $(PYTHON)):$$PATH docs/examples/external/run.sh $(BIN) out/external-example

# The suite's Slurm executor against a real one-node Slurm on localhost
# (scripts/slurm-local.sh: Debian's slurm-wlm and munge; needs root). Skipped,
# with the reason, when the cluster cannot be started here.
test-slurm:
	@flock /tmp/dmlbench-slurm.lock $(MAKE) --no-print-directory test-slurm-locked

# One local Slurm cluster per machine: test-slurm holds /tmp/dmlbench-slurm.lock
# so that two checkouts never share it.
test-slurm-locked:
	@if bash scripts/slurm-local.sh start; then \
		DMLBENCH_SLURM=1 $(GO) test -count=1 -run '^(TestSlurmSuiteIntegration|TestSlurmEvalIntegration)$$' -v ./cmd/dmlbench/; \
		rc=$$?; bash scripts/slurm-local.sh stop; exit $$rc; \
	else \
		echo "test-slurm: SKIPPED: scripts/slurm-local.sh could not start a local Slurm cluster (see /var/tmp/dmlbench-slurm)"; \
	fi

# The kill matrix (docs/recovery.md): timed and placed (strace) kills of
# run and suite, and of a Slurm task when a local cluster is up, each
# recovered by the next ordinary command and compared bit for bit with an
# uninterrupted run (45 scenarios). About 6 minutes on a busy 2-core
# machine, so not part of `make test`; FAULT_QUICK=1 (18 scenarios) about 2.
fault: build
	bash scripts/fault.sh $(BIN)

test-short:
	$(GO) test -short -count=1 ./...

# BenchmarkKernel (knn) and BenchmarkNearestCentroids (clustering) time
# every kernel level this CPU has; the rest use the chosen one. The
# Realistic benchmarks (knn/realistic_bench_test.go, docs/performance.md)
# run the full default suite and its k-NN search on the two realistic
# inputs once each and check the metric values.
bench: build
	$(GO) test -run '^$$' -bench 'Realistic' -benchtime 1x -timeout 30m ./knn/
	$(GO) test -run '^$$' -bench 'Benchmark[^R]' -benchtime 3x ./knn/
	$(GO) test -run '^$$' -bench . -benchtime 3x ./clustering/ ./metrics/ ./spectra/ ./trainers/... ./internal/blas32/

# check-generate fails when a generated file (the assembly kernels written
# by internal/asmgen and internal/blas32/gen_kernels.go, the PTX that clang
# writes from knn/gpu/kernels.cu) differs from what its generator writes
# now. Without clang (Debian's clang 14: docs/gpu.md) the PTX check says it
# skipped.
PTX_FLAGS := $(shell sed -n 's/^\/\/go:generate clang //p' knn/gpu/gen.go)
PTX_HEADER := $(shell sed -n 's/^\/\/go:generate sed -i "1i \(.*\)" kernels.ptx$$/\1/p' knn/gpu/gen.go)

check-generate:
	$(GO) run ./internal/asmgen -check
	$(GO) run internal/blas32/gen_kernels.go -check -dir internal/blas32
	@if command -v clang >/dev/null; then \
		tmp=$$(mktemp -d) && (cd knn/gpu && clang $(subst -o kernels.ptx,-o $$tmp/kernels.ptx,$(PTX_FLAGS))) && sed -i "1i $(PTX_HEADER)" $$tmp/kernels.ptx && \
		{ cmp -s $$tmp/kernels.ptx knn/gpu/kernels.ptx || { echo "check-generate: knn/gpu/kernels.ptx differs from clang's output for kernels.cu (run go generate ./knn/gpu)"; rm -rf $$tmp; exit 1; }; } ; rm -rf $$tmp; \
	else echo "check-generate: knn/gpu/kernels.ptx SKIPPED: clang is not installed (apt-get install clang; see docs/gpu.md)"; fi

lint: check-generate
	$(GO) mod tidy -diff
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

faiss:
	bash scripts/install-faiss.sh

# The GPU backend's checks (docs/gpu.md): gpu-check-build writes the static
# binaries scripts/gpu-check.sh runs (carry bin/gpu-check to a CUDA machine
# that has no Go); gpu-check builds them and runs the script here, writing
# GPU_CHECK_DIR/gpu-check-report.txt (without a device it stops with
# "no CUDA device").
GPU_CHECK_DIR ?= out/gpu-check
gpu-check-build:
	mkdir -p bin/gpu-check
	CGO_ENABLED=0 $(GO) build -o bin/gpu-check/dmlbench ./cmd/dmlbench
	CGO_ENABLED=0 $(GO) test -c -o bin/gpu-check/gpu.test ./knn/gpu
	git rev-parse HEAD >bin/gpu-check/COMMIT 2>/dev/null || echo unknown >bin/gpu-check/COMMIT

gpu-check: gpu-check-build
	bash scripts/gpu-check.sh $(GPU_CHECK_DIR)

# The input readers' fuzz targets, FUZZTIME each (go test runs one -fuzz at a time).
FUZZTIME ?= 60s
fuzz:
	for f in FuzzLoadEmbeddings FuzzLoadNPZ FuzzTextLabels FuzzLoadTorch; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./fixtures/arrays/ || exit 1; \
	done

clean:
	rm -rf bin
