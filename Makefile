# dmlbench — see README.md. `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
export GOFLAGS := -buildvcs=false
GO ?= go
BIN := bin/dmlbench

.PHONY: all setup build test test-short bench demo lint check-generate faiss fuzz clean

all: build

setup:
	bash scripts/setup.sh

# The binary gets the faiss backends when scripts/install-faiss.sh has run.
TAGS := $(shell test -e /usr/local/lib/libfaiss_c.so && echo faiss)

build:
	$(GO) build -tags "$(TAGS)" -o $(BIN) ./cmd/dmlbench

demo: setup build
	bash scripts/demo.sh

test: setup check-generate
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags faiss ./knn/... ./clustering/... ./metrics/... ./cmd/...

test-short:
	$(GO) test -short -count=1 ./...

# BenchmarkKernel (knn) and BenchmarkNearestCentroids (clustering) time
# every kernel level this CPU has; the rest use the chosen one.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./knn/ ./clustering/ ./metrics/ ./spectra/ ./trainers/...

# check-generate fails when a generated file (the assembly kernels written
# by internal/asmgen) differs from what its generator writes now.
check-generate:
	$(GO) run ./internal/asmgen -check

lint: check-generate
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

faiss:
	bash scripts/install-faiss.sh

clean:
	rm -rf bin
