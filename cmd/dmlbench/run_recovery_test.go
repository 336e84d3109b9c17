package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// --resume takes the run directory's lock before it reads run.json: a run
// still starting (locked, no run.json yet) is reported as in use, not as a
// missing file.
func TestResumeLocksBeforeReading(t *testing.T) {
	dir := t.TempDir()
	l, err := trainers.LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, errs, code := runCLI(t, "run", "--out", dir, "--resume")
	if code == 0 || !strings.Contains(errs, "is in use by pid") || strings.Contains(errs, "no such file") {
		t.Fatalf("exit %d, stderr %q; want the lock holder named", code, errs)
	}
	_, errs, code = runCLI(t, "run", "--out", filepath.Join(dir, "none"), "--resume")
	if code == 0 || !strings.Contains(errs, "is not a run directory") {
		t.Fatalf("missing directory: exit %d, stderr %q", code, errs)
	}
}

// An interruption before the first checkpoint says there is nothing to
// resume, in one sentence that does not claim a kept checkpoint.
func TestInterruptBeforeFirstCheckpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "r")
	err := newApp().RunContext(ctx, []string{"dmlbench", "run", "--quiet", "--dataset", "synthetic", "--loss", "margin", "--epochs", "1", "--out", dir})
	if err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	msg := err.Error()
	if msg != "training interrupted before the first checkpoint: nothing to resume; start the run again" {
		t.Fatalf("message %q", msg)
	}
}

// A damaged checkpoint stops --resume with one line naming the file.
func TestResumeDamagedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if err := runTrainCLI(t, "--out", dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, trainers.CheckpointFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, "run", "--out", dir, "--resume", "--epochs", "3", "--quiet")
	if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "is damaged (checksum mismatch)") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// --method keys are in run.json from its first write; the trainer's own
// keys win; a value keeps its commas.
func TestRunMethodKeys(t *testing.T) {
	dir := t.TempDir()
	if err := runTrainCLI(t, "--out", dir, "--method", "regularizer=rho=0.4,das", "--method", "loss=x", "--method", "embed_dim=8"); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(filepath.Join(dir, trainers.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if r.Method["regularizer"] != "rho=0.4,das" || r.Method["loss"] != "multisimilarity" || r.Method["embed_dim"] != "8" {
		t.Fatalf("method %v", r.Method)
	}
	if _, errs, code := runCLI(t, "run", "--dataset", "synthetic", "--loss", "margin", "--out", t.TempDir(), "--method", "novalue"); code != 2 || !strings.Contains(errs, "want KEY=VALUE") {
		t.Fatalf("bad --method: exit %d %q", code, errs)
	}
}
