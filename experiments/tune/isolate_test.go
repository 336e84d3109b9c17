package tune

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// peekTrainer writes whether the data set's test labels (by their real
// path) and its training labels can be read, then gives up the trial
// (exit 3, a finished trial with the worst score).
const peekTrainer = `#!/bin/sh
if cat %[1]s/test_labels.npy >/dev/null 2>&1; then t=test-readable; else t=test-hidden; fi
if cat %[1]s/train_labels.npy >/dev/null 2>&1; then r=train-readable; else r=train-hidden; fi
echo "$t $r" >> %[2]s
exit 3
`

func isolatePlan(t *testing.T, isolate bool) (*Plan, string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	commandData(t, data)
	marks := filepath.Join(dir, "marks")
	script := filepath.Join(dir, "peek.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(peekTrainer, data, marks)), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf("out: runs\ndataset: dir:data\nseed: 0\nsearch: random\nbudget: 1\nfolds: 2\nisolate: %v\n"+
		"fixed: {epochs: 1}\nmethods:\n  - name: peek\n    command: [%s]\n    space:\n      lr: {low: 0.001, high: 0.1}\n", isolate, script)
	path := filepath.Join(dir, "tune.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Spec: s, Out: s.OutDir("")}, marks
}

func runTuningCells(t *testing.T, p *Plan) {
	t.Helper()
	cells, _, err := p.Next()
	if err != nil || len(cells) == 0 {
		t.Fatalf("next: %v %v", cells, err)
	}
	for _, i := range cells {
		dir, _ := p.CellDir(i)
		// The trainer gives up its trial (exit 3): what it saw is in marks.
		_ = RunCell(context.Background(), dir, nil, CellOptions{Version: "test"})
	}
}

// Under isolate: true a tuning command cannot read the test split even by
// the data set's real path, and still reads the training split there.
// Without it, the same command can (the view alone is not a sandbox).
func TestIsolateHidesTestFiles(t *testing.T) {
	if msg := checkIsolation(); msg != "" {
		t.Skip(msg)
	}
	for _, isolate := range []bool{true, false} {
		p, marks := isolatePlan(t, isolate)
		runTuningCells(t, p)
		b, err := os.ReadFile(marks)
		if err != nil {
			t.Fatal(err)
		}
		want := "test-hidden train-readable"
		if !isolate {
			want = "test-readable train-readable"
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line != want {
				t.Errorf("isolate %v: the command saw %q, want %q", isolate, line, want)
			}
		}
	}
}

// isolate: true where bwrap is missing is a spec problem, not a failed
// cell later.
func TestIsolateNeedsBwrap(t *testing.T) {
	if _, err := exec.LookPath(Bwrap); err == nil {
		t.Setenv("PATH", t.TempDir())
	}
	dir := t.TempDir()
	commandData(t, filepath.Join(dir, "data"))
	spec := "out: runs\ndataset: dir:data\nbudget: 1\nfolds: 2\nisolate: true\nfixed: {epochs: 1}\nmethods:\n  - name: m\n    command: [/bin/true]\n    space:\n      lr: {low: 0.001, high: 0.1}\n"
	path := filepath.Join(dir, "tune.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, Options{}); err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("load: %v", err)
	}
}
