package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/internal/record"
)

func TestArraySpec(t *testing.T) {
	for _, tc := range []struct {
		idx  []int
		max  int
		want string
	}{
		{[]int{0, 1, 2, 3, 4, 5}, 2, "0-5%2"},
		{[]int{3}, 0, "3"},
		{[]int{0, 1, 3, 7, 8, 9, 11}, 4, "0-1,3,7-9,11%4"},
	} {
		if got := ArraySpec(tc.idx, tc.max); got != tc.want {
			t.Errorf("ArraySpec(%v, %d) = %q, want %q", tc.idx, tc.max, got, tc.want)
		}
	}
}

const slurmSuite = `
out: runs
grid: {dataset: toy-lines, loss: [margin, triplet], seed: [0, 1]}
slurm:
  partition: gpu
  time: "01:00:00"
  cpus-per-task: 4
  mem: 8G
  gpus: a100:1
  account: lab
  max_parallel: 3
  extra: ["--qos=high", "#SBATCH --constraint=avx512"]
  claim-timeout: 90s
`

func TestSlurmScript(t *testing.T) {
	s, err := Parse([]byte(slurmSuite))
	if err != nil {
		t.Fatal(err)
	}
	if s.ClaimTimeout() != 90*time.Second {
		t.Errorf("claim timeout %v", s.ClaimTimeout())
	}
	got := s.Script("/opt/dmlbench", "/data/my suite.yaml", "/data/runs", []int{0, 2, 3})
	for _, want := range []string{
		"#!/bin/bash\n",
		"#SBATCH --job-name=dmlbench-mysuite\n",
		"#SBATCH --array=0,2-3%3\n",
		"#SBATCH --output=/data/runs/slurm/logs/cell%a_job%A.out\n",
		"#SBATCH --partition=gpu\n#SBATCH --time=01:00:00\n#SBATCH --cpus-per-task=4\n#SBATCH --mem=8G\n#SBATCH --gpus=a100:1\n#SBATCH --account=lab\n",
		"#SBATCH --qos=high\n#SBATCH --constraint=avx512\n",
		"exec /opt/dmlbench suite '/data/my suite.yaml' --out /data/runs --cell \"$SLURM_ARRAY_TASK_ID\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("script lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{
		"slurm: {max_parallel: -1}", "slurm: {cpus-per-task: -2}", "slurm: {extra: [qos=high]}",
		"slurm: {claim-timeout: soon}", "slurm: {max_parallel: 2, max-parallel: 3}", "slurm: {partiton: gpu}",
		"slurm: {partition: \"a\\nb\"}",
	} {
		if _, err := Parse([]byte("grid: {dataset: d, loss: l, seed: 0}\n" + bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	// A value with white space is one sbatch argument only in quotes.
	s, err = Parse([]byte("grid: {dataset: d, loss: l, seed: 0}\nslurm: {partition: \"gpu long\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Script("/opt/dmlbench", "s.yaml", "runs", []int{0}); !strings.Contains(got, "#SBATCH --partition=\"gpu long\"\n") {
		t.Errorf("partition with a space not quoted:\n%s", got)
	}
	s, err = Parse([]byte("grid: {dataset: d, loss: l, seed: 0}\nslurm: {max-parallel: 5}"))
	if err != nil || s.Slurm.MaxParallel != 5 {
		t.Errorf("max-parallel: %v %+v", err, s.Slurm)
	}
}

// fakeSlurm answers sbatch, squeue and sacct from canned output.
func fakeSlurm(out map[string]string, fail map[string]error) *Slurm {
	return &Slurm{Run: func(_ context.Context, name string, args ...string) ([]byte, error) {
		if err := fail[name]; err != nil {
			return nil, err
		}
		return []byte(out[name]), nil
	}}
}

func TestSlurmCommands(t *testing.T) {
	sl := fakeSlurm(map[string]string{"sbatch": "4242;cluster\n", "squeue": "41_2|RUNNING\n42_0|PENDING\n42_5|RUNNING\n7|RUNNING\n"}, nil)
	id, err := sl.Submit(context.Background(), "x.sbatch")
	if err != nil || id != "4242" {
		t.Fatalf("submit: %q %v", id, err)
	}
	if _, err := fakeSlurm(map[string]string{"sbatch": "Submitted batch job 3\n"}, nil).Submit(context.Background(), "x"); err == nil {
		t.Error("non-parsable sbatch output accepted")
	}
	q, ok := sl.Queue(context.Background())
	if !ok || len(q) != 4 {
		t.Fatalf("queue %v %v", q, ok)
	}
	cells := QueuedCells(q, []string{"42"})
	if len(cells) != 2 || cells[0].State != "PENDING" || cells[5].ID != "42_5" {
		t.Errorf("queued cells %v", cells)
	}
	if alive, ok := fakeSlurm(nil, map[string]error{"squeue": errors.New("squeue: exit status 1: slurm_load_jobs error: Invalid job id specified")}).JobAlive("3_1"); alive || !ok {
		t.Errorf("unknown job: alive %v ok %v", alive, ok)
	}
	if _, ok := fakeSlurm(nil, map[string]error{"squeue": errors.New("connection refused")}).JobAlive("3_1"); ok {
		t.Error("a failing squeue must not declare jobs dead")
	}
}

func TestStatusAndSummary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	s, _ := Parse([]byte("grid: {dataset: d, loss: [a, b, c, e, f], seed: 0}"))
	jobs, _ := s.Jobs(out)
	for _, j := range jobs {
		os.MkdirAll(j.Dir, 0o755)
	}
	// 0: done in 30 s; 1: running (claimed); 2: interrupted (cancelled by
	// Slurm) with a log and a checkpoint; 3: queued; 4: never started.
	record.WriteAtomic(filepath.Join(jobs[0].Dir, "run.json"), record.Run{Status: "done", Timings: map[string]float64{"total": 30}})
	writeClaim(t, jobs[1].Dir, ClaimInfo{Host: "node7", PID: 12, Job: "42_1", Token: "t"}, 0)
	record.WriteAtomic(filepath.Join(jobs[2].Dir, "run.json"), record.Run{Status: "interrupted"})
	os.WriteFile(filepath.Join(jobs[2].Dir, "checkpoint.gob"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(out, "slurm", "logs"), 0o755)
	os.WriteFile(filepath.Join(out, "slurm", "logs", "cell2_job42.out"), []byte("suite: cell 2 of 5\nslurmstepd: error: *** JOB 43 ON vm CANCELLED AT 2026-01-01T00:00:00 ***\nFAIL d/c/s0: exit status 1\nsuite interrupted\n"), 0o644)
	RecordJob(out, "42", []int{0, 1, 2, 3, 4})
	sl := fakeSlurm(map[string]string{"squeue": "42_3|PENDING\n42_1|RUNNING\n", "sacct": "42_2|CANCELLED by 0\n"}, nil)
	cells := Status(context.Background(), out, jobs, StatusOptions{Slurm: sl, Claims: &Claimer{Timeout: time.Minute}})
	want := []string{StateDone, StateRunning, StateInterrupted, StatePending, StatePending}
	for i, c := range cells {
		if c.State != want[i] {
			t.Errorf("cell %d: %s (%s), want %s", i, c.State, c.Detail, want[i])
		}
	}
	if c := cells[2]; !strings.HasSuffix(c.Log, "cell2_job42.out") || !strings.Contains(c.ErrLine, "CANCELLED") ||
		!strings.Contains(c.Detail, "Slurm: CANCELLED") || !strings.Contains(c.Detail, "checkpoint kept, resubmit to resume") {
		t.Errorf("failed cell: %+v", c)
	}
	if !strings.Contains(cells[1].Detail, "node7 pid 12") || !strings.Contains(cells[3].Detail, "42_3 pending") {
		t.Errorf("details: %q %q", cells[1].Detail, cells[3].Detail)
	}
	// ETA: 30 s per cell × 3 left (1 running, 2 pending) ÷ 1 running = 1m30s.
	if got := Summary(cells, 0); got != "5 cells: 1 done, 1 running, 2 pending, 0 failed, 1 interrupted; ETA 1m30s (30s per cell, 3 left, 1 in parallel)" {
		t.Errorf("summary %q", got)
	}
	// With max_parallel 2, two of the three cells left run at once: 45 s.
	if got := Summary(cells, 2); !strings.Contains(got, "ETA 45s (30s per cell, 3 left, 2 in parallel)") {
		t.Errorf("summary %q", got)
	}
	var b strings.Builder
	if err := WriteStatus(&b, cells, 0); err != nil || !strings.Contains(b.String(), "log "+cells[2].Log+": slurmstepd: error") {
		t.Errorf("status output:\n%s", b.String())
	}
	if got := Summary(cells[3:], 0); got != "2 cells: 0 done, 0 running, 2 pending, 0 failed; ETA unknown (no finished cell yet)" {
		t.Errorf("summary %q", got)
	}
}

func TestLastErrorLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.txt")
	os.WriteFile(p, []byte("# 2026 dmlbench run\nepoch 1\nError: --loss nope: unknown loss\n\nepoch 2 done\n"), 0o644)
	if got := LastErrorLine(p); got != "Error: --loss nope: unknown loss" {
		t.Errorf("got %q", got)
	}
	os.WriteFile(p, []byte("a\nlast line\n# comment\n"), 0o644)
	if got := LastErrorLine(p); got != "last line" {
		t.Errorf("got %q", got)
	}
	if got := LastErrorLine(filepath.Join(dir, "none")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

func TestManifestMissing(t *testing.T) {
	dir := t.TempDir()
	s, _ := Parse([]byte("grid: {dataset: d, loss: [a, b, c], seed: 0}"))
	jobs, _ := s.Jobs(dir)
	if _, _, _, ok, err := Missing(dir); ok || err != nil {
		t.Fatalf("no manifest: ok %v err %v", ok, err)
	}
	if err := WriteManifest(dir, filepath.Join(dir, "s.yaml"), jobs); err != nil {
		t.Fatal(err)
	}
	record.WriteAtomic(filepath.Join(jobs[1].Dir, "run.json"), record.Run{Status: "done"})
	record.WriteAtomic(filepath.Join(jobs[2].Dir, "run.json"), record.Run{Status: "running"})
	missing, total, file, ok, err := Missing(dir)
	if !ok || err != nil || missing != 2 || total != 3 || file != filepath.Join(dir, "s.yaml") {
		t.Errorf("Missing = %d %d %q %v %v", missing, total, file, ok, err)
	}
}

// A suite never submitted to Slurm is resumed by running it again, and its
// status says so (not "resubmit").
func TestStatusLocalWording(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runs")
	s, _ := Parse([]byte("grid: {dataset: d, loss: a, seed: 0}"))
	jobs, _ := s.Jobs(out)
	os.MkdirAll(jobs[0].Dir, 0o755)
	record.WriteAtomic(filepath.Join(jobs[0].Dir, "run.json"), record.Run{Status: "interrupted"})
	os.WriteFile(filepath.Join(jobs[0].Dir, "checkpoint.gob"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(jobs[0].Dir, "log.txt"), []byte("training interrupted\n"), 0o644)
	c := Status(context.Background(), out, jobs, StatusOptions{})[0]
	if c.State != StateInterrupted || !strings.Contains(c.Detail, "rerun the suite to resume") || strings.Contains(c.Detail, "resubmit") {
		t.Fatalf("local interrupted cell: %+v", c)
	}
}
