package main

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
)

// TestCommandCellsEndToEnd runs a suite grid and a tune spec whose trainer
// is a command (experiments/cell/testdata/faketrainer) through the binary: cells,
// claims, reruns, tune status and report as for built-in cells.
func TestCommandCellsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a fake trainer")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	base := t.TempDir()
	bin, fake := filepath.Join(base, "dmlbench"), filepath.Join(base, "faketrainer")
	for _, b := range [][2]string{{bin, "."}, {fake, "../../experiments/cell/testdata/faketrainer"}} {
		if out, err := exec.Command(gobin, "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	rng := rand.New(rand.NewSource(1))
	data := filepath.Join(base, "data")
	_ = os.MkdirAll(data, 0o755)
	for _, split := range []string{"train", "test"} {
		x := mat32.Matrix{Rows: 40, Cols: 4, Data: make([]float32, 160)}
		labels := make([]int32, 40)
		for i := range labels {
			labels[i] = int32(i % 8)
			for j := range 4 {
				x.Data[i*4+j] = float32(labels[i]%4)*float32(j%2) + 0.3*float32(rng.NormFloat64())
			}
		}
		if err := arrays.SaveNPY(filepath.Join(data, split+"_emb.npy"), x); err != nil {
			t.Fatal(err)
		}
		if err := arrays.SaveLabelsNPY(filepath.Join(data, split+"_labels.npy"), labels); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = base
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dmlbench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	suiteFile := filepath.Join(base, "suite.yaml")
	_ = os.WriteFile(suiteFile, []byte("out: suite-out\nepochs: 2\ngrids:\n  - dataset: [dir:data]\n    command: ["+fake+"]\n    tag: fake\n    params: {lr: 0.01}\n    seed: [0, 1]\n"), 0o644)
	run("suite", suiteFile, "--jobs", "2", "--quiet")
	for _, s := range []string{"s0", "s1"} {
		r, err := record.Read(filepath.Join(base, "suite-out", "dirdata", "fake", s, "run.json"))
		if err != nil || r.Status != "done" || len(r.History) != 2 || r.Final["R@1"] <= 0 || r.Method["trainer"] != "command" {
			t.Fatalf("suite cell %s: %v %+v", s, err, r)
		}
	}
	if out := run("suite", suiteFile, "--quiet"); !strings.Contains(out, "0 done now, 2 done before") {
		t.Errorf("rerun of a finished suite: %s", out)
	}
	if out := run("report", filepath.Join(base, "suite-out")); !strings.Contains(out, "fake") {
		t.Errorf("report: %s", out)
	}

	tuneFile := filepath.Join(base, "tune.yaml")
	_ = os.WriteFile(tuneFile, []byte("out: tune-out\ndataset: dir:data\nbudget: 2\nfolds: 2\nsearch: random\nfixed: {epochs: 2}\nmethods:\n  - name: fake\n    command: ["+fake+"]\n    space:\n      lr: {low: 0.001, high: 0.1, log: true}\n"), 0o644)
	run("tune", tuneFile, "--parallel", "2", "--quiet")
	if out := run("tune", "status", tuneFile); !strings.Contains(out, "fake") {
		t.Errorf("tune status: %s", out)
	}
	if out := run("report", filepath.Join(base, "tune-out")); !strings.Contains(out, "fake/concatenated") {
		t.Errorf("report: %s", out)
	}
}
