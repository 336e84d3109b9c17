package main

import (
	"encoding/json"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn/gpu"
)

// TestEvalBackendAutoAndGPU: --backend auto gives the same metrics as the
// default --backend exact (k-NN and k-means; without a device auto is
// exact, with one the GPU reproduces it); without a CUDA device --backend
// gpu is a one-line error with a non-zero exit, and version says why there
// is no GPU.
func TestEvalBackendAutoAndGPU(t *testing.T) {
	dir := t.TempDir()
	emb, lab := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	rng := rand.New(rand.NewSource(3))
	n, d := 240, 12
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % 8)
	}
	if err := arrays.SaveNPY(emb, x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, labels); err != nil {
		t.Fatal(err)
	}
	metricsOf := func(args ...string) map[string]*float64 {
		t.Helper()
		out, errs, code := runCLI(t, append([]string{"eval", "--emb", emb, "--labels", lab, "--format", "json", "--quiet"}, args...)...)
		if code != 0 {
			t.Fatalf("eval %v: exit %d: %s", args, code, errs)
		}
		var r struct {
			Metrics map[string]*float64 `json:"metrics"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Metrics
	}
	auto, exact := metricsOf("--backend", "auto"), metricsOf()
	for key, v := range exact {
		a := auto[key]
		if (a == nil) != (v == nil) || a != nil && *a != *v {
			t.Fatalf("%s: --backend auto gives %v, exact %v", key, a, v)
		}
	}
	ok, info := gpu.Available()
	var out string // version's lines (it prints to os.Stdout)
	for _, l := range versionLines() {
		out += l + "\n"
	}
	if !strings.Contains(out, "GPU: ") {
		t.Fatalf("version does not report the GPU:\n%s", out)
	}
	if ok {
		t.Skipf("CUDA device present (%s): the no-device error is not testable here", info)
	}
	if !strings.Contains(out, "GPU: none (no CUDA device: ") {
		t.Fatalf("version without a GPU:\n%s", out)
	}
	_, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--backend", "gpu", "--quiet")
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "no CUDA device") {
		t.Fatalf("--backend gpu without a device: exit %d, stderr %q", code, errs)
	}
}
