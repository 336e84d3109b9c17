package suite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHelperSuiteProcess is the suite process of TestKilledSuiteKillsChild
// (it does nothing unless started by it).
func TestHelperSuiteProcess(t *testing.T) {
	dir := os.Getenv("SUITE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process of TestKilledSuiteKillsChild")
	}
	r := &Runner{Bin: "/bin/sh"}
	j := Job{Kind: Train, Name: "x", Dir: filepath.Join(dir, "x"),
		Args: []string{"-c", "echo $$ > " + filepath.Join(dir, "child.pid") + "; exec sleep 60"}}
	_, _ = r.Run(context.Background(), []Job{j})
}

// TestKilledSuiteKillsChild: kill -9 of the suite process takes its running
// child with it (issue: the child kept writing its run directory while a
// restarted suite started a second writer there).
func TestKilledSuiteKillsChild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSuiteProcess$")
	cmd.Env = append(os.Environ(), "SUITE_HELPER_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	var child int
	for end := time.Now().Add(20 * time.Second); child == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatal("the helper suite never started its child")
		}
		b, err := os.ReadFile(pidFile)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for end := time.Now().Add(5 * time.Second); pidAlive(child); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			exec.Command("kill", "-9", strconv.Itoa(child)).Run()
			t.Fatalf("child %d still runs 5 s after its suite was killed with SIGKILL", child)
		}
	}
}

func TestPidAlive(t *testing.T) {
	if !pidAlive(os.Getpid()) {
		t.Error("own pid not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if pidAlive(cmd.Process.Pid) {
		t.Errorf("reaped pid %d reported alive", cmd.Process.Pid)
	}
}
