package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/internal/record"
)

// childEnv carries the CLI arguments of a re-executed test binary.
const childEnv = "DMLBENCH_TEST_CHILD_ARGS"

// TestHelperChild is not a test: started by startChild with childEnv set,
// it runs the CLI with those arguments as main does and exits.
func TestHelperChild(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("helper process only")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(3)
	}
	os.Exit(run(append([]string{"dmlbench"}, args...), os.Stdout, os.Stderr))
}

// startChild runs `dmlbench ARGS` in a separate process (this test binary).
func startChild(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// waitLocked waits until pid holds the lock of run directory dir.
func waitLocked(t *testing.T, dir string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, ".lock")); err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			return
		}
	}
	t.Fatalf("pid %d never locked %s", pid, dir)
}

// Killing a resume (kill -9, while its first epoch runs) leaves the
// finished run's run.json as it was, a second writer on the directory is
// refused while the resume runs ("in use by pid N"), the kernel releases
// the lock with the killed process, and resuming again reproduces the
// uninterrupted run.
func TestKillResumeAndRunDirLock(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three short runs in child processes")
	}
	tmp := t.TempDir()
	// Under 1 ms per step here: an epoch of 6000 steps lasts seconds, long
	// enough to kill the resume inside it.
	train := func(out string, extra ...string) []string {
		return append([]string{"run", "--quiet", "--dataset", "synthetic", "--loss", "multisimilarity", "--sampler", "spc-4",
			"--iters-per-epoch", "6000", "--batch-size", "32", "--hidden", "16", "--embed-dim", "8", "--metrics", "R@1",
			"--seed", "4", "--out", out}, extra...)
	}
	ref, dir := filepath.Join(tmp, "ref"), filepath.Join(tmp, "run")
	if code, msg := runExit(train(ref, "--epochs", "2")...); code != 0 {
		t.Fatal(msg)
	}
	if code, msg := runExit(train(dir, "--epochs", "1")...); code != 0 {
		t.Fatal(msg)
	}
	runPath := filepath.Join(dir, "run.json")
	before, _ := os.ReadFile(runPath)

	child := startChild(t, "run", "--quiet", "--out", dir, "--resume", "--epochs", "2")
	waitLocked(t, dir, child.Process.Pid)
	code, msg := runExit("run", "--quiet", "--out", dir, "--resume", "--epochs", "2")
	if want := "is in use by pid " + strconv.Itoa(child.Process.Pid); code == 0 || !strings.Contains(msg, want) {
		t.Errorf("second writer: exit %d %q, want %q", code, msg, want)
	}
	time.Sleep(200 * time.Millisecond)
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if after, _ := os.ReadFile(runPath); !bytes.Equal(before, after) {
		r, _ := record.Read(runPath)
		t.Fatalf("killing the resume changed the finished run.json (now status %s, %d epochs)", r.Status, len(r.History))
	}

	if code, msg := runExit("run", "--quiet", "--out", dir, "--resume", "--epochs", "2"); code != 0 {
		t.Fatalf("resume after the kill (the lock must be free): %s", msg)
	}
	a, _ := record.Read(filepath.Join(ref, "run.json"))
	b, _ := record.Read(runPath)
	if b.Status != "done" || len(b.History) != 2 {
		t.Fatalf("resumed run: status %s, %d epochs", b.Status, len(b.History))
	}
	for i := range a.History {
		if a.History[i].Loss != b.History[i].Loss || !sameMetrics(a.History[i].Metrics, b.History[i].Metrics) {
			t.Fatalf("epoch %d: resumed after a kill %v %v, uninterrupted %v %v", i+1, b.History[i].Loss, b.History[i].Metrics, a.History[i].Loss, a.History[i].Metrics)
		}
	}
}
