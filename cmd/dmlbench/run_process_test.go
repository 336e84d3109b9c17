package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// childEnv carries the CLI arguments of a re-executed test binary;
// holdEnv ("EPOCH/STEP") makes that child's run stop after the given
// training step, print heldLine on stdout and wait there to be killed.
const (
	childEnv = "DMLBENCH_TEST_CHILD_ARGS"
	holdEnv  = "DMLBENCH_TEST_CHILD_HOLD"
	heldLine = "held"
)

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
	if hold := os.Getenv(holdEnv); hold != "" {
		var epoch, step int
		if _, err := fmt.Sscanf(hold, "%d/%d", &epoch, &step); err != nil {
			os.Exit(3)
		}
		onRunStep = func(p trainers.Progress) {
			if p.Phase == "train" && p.Epoch == epoch && p.Iter == step {
				fmt.Println(heldLine)
				for {
					time.Sleep(time.Hour)
				}
			}
		}
	}
	os.Exit(run(append([]string{"dmlbench"}, args...), os.Stdout, os.Stderr))
}

// startChild runs `dmlbench ARGS` in a separate process (this test binary)
// with the extra environment variables env; its stderr is the test's.
func startChild(t *testing.T, env []string, args ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+string(b)), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, stdout
}

// waitHeld reads the child's stdout until it reports heldLine (holdEnv).
func waitHeld(t *testing.T, stdout io.Reader) {
	t.Helper()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == heldLine {
			return
		}
	}
	t.Fatal("the child ended before its hold step (its stderr is above)")
}

// Killing a resume (kill -9, held in the middle of its epoch) leaves the
// finished run's run.json as it was, a second writer on the directory is
// refused while the resume runs ("in use by pid N"), the kernel releases
// the lock with the killed process, and resuming again reproduces the
// uninterrupted run.
func TestKillResumeAndRunDirLock(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three short runs in child processes")
	}
	tmp := t.TempDir()
	train := func(out string, extra ...string) []string {
		return append([]string{"run", "--quiet", "--dataset", "synthetic", "--loss", "multisimilarity", "--sampler", "spc-4",
			"--iters-per-epoch", "40", "--batch-size", "32", "--hidden", "16", "--embed-dim", "8", "--metrics", "R@1",
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

	// The resume stops after step 20 of epoch 2 (of 40) and waits there:
	// the kill lands mid-epoch on a fast machine as on a slow one.
	child, stdout := startChild(t, []string{holdEnv + "=2/20"}, "run", "--quiet", "--out", dir, "--resume", "--epochs", "2")
	waitHeld(t, stdout)
	code, msg := runExit("run", "--quiet", "--out", dir, "--resume", "--epochs", "2")
	if want := "is in use by pid " + strconv.Itoa(child.Process.Pid); code == 0 || !strings.Contains(msg, want) {
		t.Errorf("second writer: exit %d %q, want %q", code, msg, want)
	}
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
