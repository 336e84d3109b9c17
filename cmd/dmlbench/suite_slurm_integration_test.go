package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/reports/suite"
)

// TestSlurmSuiteIntegration runs a 6-cell suite through a real Slurm
// (scripts/slurm-local.sh start; `make test` does it and sets
// DMLBENCH_SLURM=1): submit with max_parallel 2, scancel one task in the
// middle of its run, submit again, and check that every cell finished
// once, the cancelled one by resuming its checkpoint, and that the report
// equals the local executor's.
func TestSlurmSuiteIntegration(t *testing.T) {
	if os.Getenv("DMLBENCH_SLURM") != "1" {
		t.Skip("Slurm integration test: set DMLBENCH_SLURM=1 with a cluster up (bash scripts/slurm-local.sh start; make test does both)")
	}
	for _, c := range []string{"sbatch", "squeue", "scancel"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("DMLBENCH_SLURM=1 but %s is not on PATH", c)
		}
	}
	begin := time.Now()
	dir := t.TempDir()
	bin := filepath.Join(dir, "dmlbench")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	phase := func(what string) { t.Logf("%5.1fs %s", time.Since(begin).Seconds(), what) }
	phase("built")
	suiteFile := filepath.Join(dir, "toy.yaml")
	const epochs = 40
	os.WriteFile(suiteFile, []byte(`out: runs-slurm
epochs: `+strconv.Itoa(epochs)+`
grid:
  dataset: toy-lines
  loss: [margin, triplet, contrastive]
  miner: distance
  sampler: spc-2
  seed: [0, 1]
slurm:
  cpus-per-task: 1
  time: "00:05:00"
  max_parallel: 2
`), 0o644)
	spec, err := suite.Load(suiteFile)
	if err != nil {
		t.Fatal(err)
	}
	out := spec.OutDir("")
	jobs, err := spec.Jobs(out)
	if err != nil || len(jobs) != 6 {
		t.Fatalf("%d jobs, %v", len(jobs), err)
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var o, e bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("dmlbench %s: %v\n%s%s", strings.Join(args, " "), err, o.String(), e.String())
		}
		return o.String(), e.String()
	}
	squeue := func(job string) string {
		b, _ := exec.Command("squeue", "-h", "-r", "-j", job, "-t", "PD,R,S,CG,CF", "-o", "%i %T").Output()
		return strings.TrimSpace(string(b))
	}
	waitFor := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		end := time.Now().Add(limit)
		for !ok() {
			if time.Now().After(end) {
				b, _ := exec.Command("squeue", "-a").CombinedOutput()
				t.Fatalf("timed out waiting for %s\nsqueue:\n%s", what, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// 1. Submit all six cells.
	stdout, stderr := run("suite", suiteFile, "--executor", "slurm")
	job1 := strings.TrimSpace(stdout)
	submitted := []string{job1}
	t.Cleanup(func() { // a failed test leaves nothing running in the cluster
		exec.Command("scancel", submitted...).Run()
	})
	if !strings.Contains(stderr, "--array=0-5%2") {
		t.Fatalf("first submission: %s", stderr)
	}
	script, _ := os.ReadFile(filepath.Join(out, "slurm", "suite.sbatch"))
	if !bytes.Contains(script, []byte("#SBATCH --cpus-per-task=1\n")) || !bytes.Contains(script, []byte("--cell \"$SLURM_ARRAY_TASK_ID\"")) {
		t.Fatalf("script:\n%s", script)
	}

	// 2. Cancel one task once it has a checkpoint, in the middle of its run.
	victim := -1
	waitFor("a running cell with a checkpoint", 60*time.Second, func() bool {
		for i, j := range jobs {
			r, err := record.Read(filepath.Join(j.Dir, "run.json"))
			if err != nil || r.Status != "running" || len(r.History) == 0 || len(r.History) > epochs/2 {
				continue
			}
			if _, err := os.Stat(filepath.Join(j.Dir, "checkpoint.gob")); err == nil {
				victim = i
				return true
			}
		}
		return false
	})
	phase("cancelling")
	task := job1 + "_" + strconv.Itoa(victim)
	if b, err := exec.Command("scancel", task).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", task, err, b)
	}
	waitFor("the cancelled task to leave the queue", 30*time.Second, func() bool { return squeue(task) == "" })
	if suite.IsDone(jobs[victim].Dir) {
		t.Fatalf("cell %d finished although cancelled", victim)
	}
	st, _ := run("suite", "status", suiteFile)
	if !strings.Contains(st, "failed") || !strings.Contains(st, "checkpoint kept") {
		t.Errorf("status after scancel shows no failed cell with a checkpoint:\n%s", st)
	}

	phase("cancelled")
	// 3. Submit again: only the cancelled cell is new work.
	stdout, stderr = run("suite", suiteFile, "--executor", "slurm")
	job2 := strings.TrimSpace(stdout)
	submitted = append(submitted, job2)
	if !strings.Contains(stderr, "--array="+strconv.Itoa(victim)+"%2)") {
		t.Fatalf("second submission should hold only cell %d: %s", victim, stderr)
	}
	waitFor("both jobs to finish", 90*time.Second, func() bool { return squeue(job1) == "" && squeue(job2) == "" })

	phase("slurm jobs finished")
	// 4. Every cell done, run once; the cancelled one resumed.
	for i, j := range jobs {
		if !suite.IsDone(j.Dir) {
			st, _ := run("suite", "status", suiteFile)
			t.Fatalf("cell %d (%s) not done:\n%s", i, j.Name, st)
		}
		b, _ := os.ReadFile(filepath.Join(j.Dir, "log.txt"))
		var starts, resumes int
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "# ") && strings.Contains(l, " run --dataset ") {
				starts++
			}
			if strings.HasPrefix(l, "# resuming from") {
				resumes++
			}
		}
		want := 1
		if i == victim {
			want = 2
		}
		if starts != want || resumes != want-1 {
			t.Errorf("cell %d: %d starts, %d resumes, want %d and %d\n%s", i, starts, resumes, want, want-1, b)
		}
	}
	st, _ = run("suite", "status", suiteFile)
	if !strings.Contains(st, "6 cells: 6 done, 0 running, 0 pending, 0 failed") {
		t.Errorf("status:\n%s", st)
	}

	// 5. The same suite with the local executor gives the same table.
	local := filepath.Join(dir, "runs-local")
	run("suite", suiteFile, "--out", local, "--jobs", "2", "--quiet")
	phase("local suite finished")
	repSlurm, _ := run("report", out)
	repLocal, _ := run("report", local)
	if repSlurm != repLocal {
		t.Errorf("report differs:\nslurm:\n%s\nlocal:\n%s", repSlurm, repLocal)
	}
	t.Logf("cancelled cell %d; whole test %.1fs", victim, time.Since(begin).Seconds())
}
