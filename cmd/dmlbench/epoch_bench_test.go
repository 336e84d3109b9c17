package main

import (
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkRunOmniglotCNNEpoch runs `dmlbench run` in process for one
// epoch of the default CNN on Omniglot (multi-similarity, SPC-2, batch 112,
// the per-epoch evaluation with the default metrics included), so that
// `go test -bench RunOmniglotCNNEpoch -benchtime 1x -cpuprofile cpu.out
// ./cmd/dmlbench` profiles a whole epoch: data, sampler, batch assembly,
// forward/backward, optimiser and evaluation.
func BenchmarkRunOmniglotCNNEpoch(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, strconv.Itoa(i))
		if err := newApp().Run([]string{"dmlbench", "run", "--quiet", "--dataset", "omniglot", "--arch", "cnn",
			"--loss", "multisimilarity", "--epochs", "1", "--out", out}); err != nil {
			b.Fatal(err)
		}
	}
}
