package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// fakeTrainer is a stand-in dmlbench for suite tests: "run … --out DIR"
// writes DIR/run.json (and DIR/env with its GOMAXPROCS); loss "broken"
// fails with a last error line.
const fakeTrainer = `#!/bin/sh
out=""; loss=""
while [ $# -gt 0 ]; do
  case "$1" in --out) out="$2"; shift;; --loss) loss="$2"; shift;; esac; shift
done
echo "GOMAXPROCS=${GOMAXPROCS:-}" > "$out/env"
[ "$loss" = broken ] && { echo "Error: loss broken exploded" >&2; echo "bye" >&2; exit 3; }
printf '{"schema":1,"dataset":"d","method":{"loss":"%s"},"status":"done","final":{"R@1":0.4},"timings":{"total":2}}' "$loss" > "$out/run.json"
`

func TestSuiteSlurmCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script trainer")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fake.sh")
	os.WriteFile(script, []byte(fakeTrainer), 0o755)
	suiteFile := filepath.Join(dir, "s.yaml")
	os.WriteFile(suiteFile, []byte(`out: runs
grid: {dataset: d, loss: [a, b, broken], seed: [0, 1]}
slurm: {partition: cpu, cpus-per-task: 3, max_parallel: 2}
`), 0o644)
	out := filepath.Join(dir, "runs")

	// --executor slurm --dry-run writes the script over all six cells.
	_, errs, code := runCLI(t, "suite", suiteFile, "--executor", "slurm", "--dry-run", "--bin", script)
	if code != 0 || !strings.Contains(errs, "6 to submit (--array=0-5%2)") {
		t.Fatalf("slurm dry run %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(out, "slurm", "suite.sbatch"))
	if err != nil || !strings.Contains(string(b), "#SBATCH --partition=cpu\n") ||
		!strings.Contains(string(b), "exec "+script+" suite "+suiteFile+" --out "+out+" --cell \"$SLURM_ARRAY_TASK_ID\"") {
		t.Fatalf("script %v:\n%s", err, b)
	}

	// --cell runs one cell, with GOMAXPROCS from SLURM_CPUS_PER_TASK.
	t.Setenv("SLURM_CPUS_PER_TASK", "3")
	_, errs, code = runCLI(t, "suite", suiteFile, "--cell", "1", "--bin", script)
	if code != 0 || !strings.Contains(errs, "cell 1 done") {
		t.Fatalf("--cell 1: %d %s", code, errs)
	}
	if env, _ := os.ReadFile(filepath.Join(out, "d/b/s0/env")); string(env) != "GOMAXPROCS=3\n" {
		t.Errorf("cell env %q", env)
	}
	if _, err := os.Stat(filepath.Join(out, "d/a/s0")); err == nil {
		t.Error("--cell 1 touched cell 0")
	}
	if _, errs, _ = runCLI(t, "suite", suiteFile, "--cell", "1", "--bin", script); !strings.Contains(errs, "cell 1 was already done") {
		t.Errorf("second --cell 1: %s", errs)
	}
	_, errs, code = runCLI(t, "suite", suiteFile, "--cell", "2", "--bin", script)
	if code != 1 || !strings.Contains(errs, "Error: loss broken exploded") {
		t.Errorf("failing cell: exit %d, want 1 and its last error line: %s", code, errs)
	}

	// The dry run now leaves out the finished cell.
	_, errs, _ = runCLI(t, "suite", suiteFile, "--executor", "slurm", "--dry-run", "--bin", script)
	if !strings.Contains(errs, "1 done, 0 running, 0 queued, 5 to submit (--array=0,2-5%2)") {
		t.Errorf("second dry run: %s", errs)
	}

	// A cell claimed by a live process elsewhere shows as busy in the local dry run.
	host, _ := os.Hostname()
	os.MkdirAll(filepath.Join(out, "d/a/s1"), 0o755)
	os.WriteFile(filepath.Join(out, "d/a/s1", "claim.json"), []byte(`{"host":"`+host+`","pid":`+strconv.Itoa(os.Getpid())+`,"token":"x"}`), 0o644)
	lst, _, _ := runCLI(t, "suite", suiteFile, "--dry-run", "--bin", script)
	if !strings.Contains(lst, "busy   3 d/a/s1") || !strings.Contains(lst, "6 runs, 4 to do, 1 run by another process") {
		t.Errorf("dry run with a claimed cell:\n%s", lst)
	}
	_, errs, _ = runCLI(t, "suite", suiteFile, "--executor", "slurm", "--dry-run", "--bin", script)
	if !strings.Contains(errs, "1 done, 1 running, 0 queued, 4 to submit (--array=0,2,4-5%2)") {
		t.Errorf("slurm dry run with a claimed cell: %s", errs)
	}
	os.Remove(filepath.Join(out, "d/a/s1", "claim.json"))

	// status: one line per cell and a summary.
	st, errs, code := runCLI(t, "suite", "status", suiteFile)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	for _, want := range []string{"  1  done     d/b/s0", "  2  failed   d/broken/s0", "Error: loss broken exploded", "  0  pending  d/a/s0", "6 cells: 1 done, 0 running, 4 pending, 1 failed"} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}

	// report on the unfinished suite: partial table, missing cells in the footer.
	rep, errs, code := runCLI(t, "report", out)
	if code != 0 || !strings.Contains(rep, "5 of 6 cells missing") {
		t.Errorf("report %d: %s%s", code, rep, errs)
	}

	// Usage errors.
	for _, bad := range [][]string{
		{"suite", suiteFile, "--cell", "6"}, {"suite", suiteFile, "--cell", "-2"},
		{"suite", suiteFile, "--executor", "pbs"}, {"suite", suiteFile, "--cell", "0", "--executor", "slurm"},
		{"suite", "status"}, {"suite", "status", suiteFile, suiteFile},
	} {
		if _, _, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	// Without sbatch: a one-line error, nothing submitted.
	t.Setenv("PATH", dir)
	_, errs, code = runCLI(t, "suite", suiteFile, "--executor", "slurm", "--bin", script)
	if code != 1 || !strings.Contains(errs, "sbatch not found") {
		t.Errorf("no sbatch: %d %s", code, errs)
	}
}
