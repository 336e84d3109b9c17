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

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/internal/record"
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
	h := newSlurmHarness(t)
	job1 := h.submitAll()
	victim := h.cancelMidRun(job1)
	h.resubmit(job1, victim)
	h.checkCellsRanOnce(victim)
	h.compareWithLocal()
	t.Logf("cancelled cell %d; whole test %.1fs", victim, time.Since(h.begin).Seconds())
}

// slurmEpochs is the length of every run of the integration suite; with
// 100 steps an epoch (extra: --iters-per-epoch) a cell lasts several seconds,
// enough to be cancelled in its first half even on a fast machine (40 plain
// toy-lines epochs take 0.4 s, and the cell would finish before scancel).
const slurmEpochs = 40

// slurmHarness is the integration test's binary, suite and helpers.
type slurmHarness struct {
	t         *testing.T
	begin     time.Time
	dir, bin  string
	suiteFile string
	out       string      // the suite's output directory
	jobs      []suite.Job // its six cells
	submitted []string    // Slurm job ids, cancelled at cleanup
}

// newSlurmHarness builds the binary and writes the 6-cell suite (3 losses
// × 2 seeds on toy-lines, at most 2 array tasks at once).
func newSlurmHarness(t *testing.T) *slurmHarness {
	h := &slurmHarness{t: t, begin: time.Now(), dir: t.TempDir()}
	h.bin = filepath.Join(h.dir, "dmlbench")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", h.bin, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	h.phase("built")
	h.suiteFile = filepath.Join(h.dir, "toy.yaml")
	os.WriteFile(h.suiteFile, []byte(`out: runs-slurm
epochs: `+strconv.Itoa(slurmEpochs)+`
grid:
  dataset: toy-lines
  loss: [margin, triplet, contrastive]
  miner: distance
  sampler: spc-2
  batch-size: [32]  # toy-lines trains on 60 rows
  extra: --iters-per-epoch 100  # ~0.15 s an epoch: a cell runs ~6 s, long enough to cancel mid-run
  seed: [0, 1]
slurm:
  cpus-per-task: 1
  time: "00:05:00"
  max_parallel: 2
`), 0o644)
	var err error
	_, h.out, h.jobs, err = suite.LoadCells(h.suiteFile, "", 0)
	if err != nil || len(h.jobs) != 6 {
		t.Fatalf("%d jobs, %v", len(h.jobs), err)
	}
	t.Cleanup(func() { // a failed test leaves nothing running in the cluster
		if len(h.submitted) > 0 {
			exec.Command("scancel", h.submitted...).Run()
		}
	})
	return h
}

func (h *slurmHarness) phase(what string) {
	h.t.Logf("%5.1fs %s", time.Since(h.begin).Seconds(), what)
}

// run executes the binary with args (2 minutes at most), failing the test
// on a non-zero exit; it returns stdout and stderr.
func (h *slurmHarness) run(args ...string) (string, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("dmlbench %s: %v\n%s%s", strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// slurmQueued lists the tasks of job that are still queued or running.
func slurmQueued(job string) string {
	b, _ := exec.Command("squeue", "-h", "-r", "-j", job, "-t", "PD,R,S,CG,CF", "-o", "%i %T").Output()
	return strings.TrimSpace(string(b))
}

// waitFor polls ok every 50 ms, failing the test with the queue after limit.
func (h *slurmHarness) waitFor(what string, limit time.Duration, ok func() bool) {
	h.t.Helper()
	end := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(end) {
			b, _ := exec.Command("squeue", "-a").CombinedOutput()
			h.t.Fatalf("timed out waiting for %s\nsqueue:\n%s", what, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// submitAll submits the six cells as one array (2 at a time) and checks
// the batch script; it returns the Slurm job id.
func (h *slurmHarness) submitAll() string {
	stdout, stderr := h.run("suite", h.suiteFile, "--executor", "slurm")
	job := strings.TrimSpace(stdout)
	h.submitted = append(h.submitted, job)
	if !strings.Contains(stderr, "--array=0-5%2") {
		h.t.Fatalf("first submission: %s", stderr)
	}
	script, _ := os.ReadFile(filepath.Join(h.out, "slurm", "suite.sbatch"))
	if !bytes.Contains(script, []byte("#SBATCH --cpus-per-task=1\n")) || !bytes.Contains(script, []byte("--cell \"$SLURM_ARRAY_TASK_ID\"")) {
		h.t.Fatalf("script:\n%s", script)
	}
	return job
}

// cancelMidRun scancels the task of a cell that is running and has a
// checkpoint of an epoch in its first half, waits until it has left the
// queue, checks that `suite status` shows it failed with its checkpoint,
// and returns the cell.
func (h *slurmHarness) cancelMidRun(job string) int {
	victim := -1
	h.waitFor("a running cell with a checkpoint", 60*time.Second, func() bool {
		for i, j := range h.jobs {
			r, err := record.Read(filepath.Join(j.Dir, "run.json"))
			if err != nil || r.Status != "running" || len(r.History) == 0 || len(r.History) > slurmEpochs/2 {
				continue
			}
			if _, err := os.Stat(filepath.Join(j.Dir, "checkpoint.gob")); err == nil {
				victim = i
				return true
			}
		}
		return false
	})
	h.phase("cancelling")
	task := job + "_" + strconv.Itoa(victim)
	if b, err := exec.Command("scancel", task).CombinedOutput(); err != nil {
		h.t.Fatalf("scancel %s: %v %s", task, err, b)
	}
	h.waitFor("the cancelled task to leave the queue", 30*time.Second, func() bool { return slurmQueued(task) == "" })
	if suite.IsDone(h.jobs[victim].Dir) {
		h.t.Fatalf("cell %d finished although cancelled", victim)
	}
	st, _ := h.run("suite", "status", h.suiteFile)
	if !strings.Contains(st, "failed") || !strings.Contains(st, "checkpoint kept") {
		h.t.Errorf("status after scancel shows no failed cell with a checkpoint:\n%s", st)
	}
	h.phase("cancelled")
	return victim
}

// resubmit submits the suite again, checks that only the cancelled cell is
// new work, and waits for both jobs to finish.
func (h *slurmHarness) resubmit(job1 string, victim int) {
	stdout, stderr := h.run("suite", h.suiteFile, "--executor", "slurm")
	job2 := strings.TrimSpace(stdout)
	h.submitted = append(h.submitted, job2)
	if !strings.Contains(stderr, "--array="+strconv.Itoa(victim)+"%2)") {
		h.t.Fatalf("second submission should hold only cell %d: %s", victim, stderr)
	}
	h.waitFor("both jobs to finish", 5*time.Minute, func() bool { return slurmQueued(job1) == "" && slurmQueued(job2) == "" })
	h.phase("slurm jobs finished")
}

// checkCellsRanOnce checks that every cell is done and its log.txt shows
// one start, the cancelled cell's two with one resume.
func (h *slurmHarness) checkCellsRanOnce(victim int) {
	for i, j := range h.jobs {
		if !suite.IsDone(j.Dir) {
			st, _ := h.run("suite", "status", h.suiteFile)
			h.t.Fatalf("cell %d (%s) not done:\n%s", i, j.Name, st)
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
			h.t.Errorf("cell %d: %d starts, %d resumes, want %d and %d\n%s", i, starts, resumes, want, want-1, b)
		}
	}
	st, _ := h.run("suite", "status", h.suiteFile)
	if !strings.Contains(st, "6 cells: 6 done, 0 running, 0 pending, 0 failed") {
		h.t.Errorf("status:\n%s", st)
	}
}

// compareWithLocal runs the same suite with the local executor and checks
// that its report equals the Slurm one.
func (h *slurmHarness) compareWithLocal() {
	local := filepath.Join(h.dir, "runs-local")
	h.run("suite", h.suiteFile, "--out", local, "--jobs", "2", "--quiet")
	h.phase("local suite finished")
	repSlurm, _ := h.run("report", h.out)
	repLocal, _ := h.run("report", local)
	if repSlurm != repLocal {
		h.t.Errorf("report differs:\nslurm:\n%s\nlocal:\n%s", repSlurm, repLocal)
	}
}
