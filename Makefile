# dmlbench — see README.md. `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
export GOFLAGS := -buildvcs=false
GO ?= go
BIN := bin/dmlbench

.PHONY: all setup datasets build test test-slurm test-short bench demo lint check-generate faiss fuzz clean

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

test: setup datasets check-generate
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags faiss ./knn/... ./clustering/... ./metrics/... ./cmd/...
	$(MAKE) --no-print-directory test-slurm

# The suite's Slurm executor against a real one-node Slurm on localhost
# (scripts/slurm-local.sh: Debian's slurm-wlm and munge; needs root). Skipped,
# with the reason, when the cluster cannot be started here.
test-slurm:
	@if bash scripts/slurm-local.sh start; then \
		DMLBENCH_SLURM=1 $(GO) test -count=1 -run '^TestSlurmSuiteIntegration$$' -v ./cmd/dmlbench/; \
		rc=$$?; bash scripts/slurm-local.sh stop; exit $$rc; \
	else \
		echo "test-slurm: SKIPPED: scripts/slurm-local.sh could not start a local Slurm cluster (see /var/tmp/dmlbench-slurm)"; \
	fi

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
# by internal/asmgen and internal/blas32/gen_kernels.go) differs from what
# its generator writes now. (knn/gpu/kernels.ptx needs clang: see docs/gpu.md.)
check-generate:
	$(GO) run ./internal/asmgen -check
	@tmp=$$(mktemp -d) && cp internal/blas32/gen_kernels.go $$tmp/ && \
		(cd $$tmp && $(GO) run gen_kernels.go) && \
		for f in kernel_avx2_amd64.s kernel_avx512_amd64.s; do \
			cmp -s $$tmp/$$f internal/blas32/$$f || { echo "check-generate: internal/blas32/$$f differs from gen_kernels.go's output (run go generate ./internal/blas32)"; rm -rf $$tmp; exit 1; }; \
		done; rm -rf $$tmp

lint: check-generate
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

faiss:
	bash scripts/install-faiss.sh

# The input readers' fuzz targets, FUZZTIME each (go test runs one -fuzz at a time).
FUZZTIME ?= 60s
fuzz:
	for f in FuzzLoadEmbeddings FuzzLoadNPZ FuzzTextLabels; do \
		$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./fixtures/ || exit 1; \
	done

clean:
	rm -rf bin
