package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

// Select leaves out the cells done, run (a live claim) or queued (a
// recorded job in squeue); Submit records the array's job id, a
// follow-up job's not.
func TestSubmitterSelectAndSubmit(t *testing.T) {
	out := t.TempDir()
	dirs := make([]string, 5)
	for i := range dirs {
		dirs[i] = filepath.Join(out, "c", string(rune('a'+i)))
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	record.WriteAtomic(filepath.Join(dirs[0], "run.json"), record.Run{Status: "done"})
	claims := &Claimer{}
	cl, err := claims.Acquire(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Release()
	if err := RecordJob(out, "41", []int{2}); err != nil {
		t.Fatal(err)
	}
	sub := &Submitter{Out: out, Claims: claims,
		Slurm: fakeSlurm(map[string]string{"sbatch": "77\n", "squeue": "41_2|PENDING\n"}, nil)}
	p, err := sub.Select(context.Background(), []int{0, 1, 2, 3, 4}, func(n int) string { return dirs[n] })
	if err != nil {
		t.Fatal(err)
	}
	if p.Done != 1 || p.Running != 1 || p.Queued != 1 || len(p.Todo) != 2 || p.Todo[0] != 3 || p.Todo[1] != 4 {
		t.Fatalf("pending %+v", p)
	}
	if _, err := os.Stat(filepath.Join(SlurmDir(out), "logs")); err != nil {
		t.Error("no logs directory for the tasks")
	}
	path, err := sub.WriteScript("x.sbatch", "#!/bin/sh\n")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("script %s: %v, mode %v", path, err, st.Mode())
	}
	if id, err := sub.Submit(context.Background(), path, p.Todo); err != nil || id != "77" {
		t.Fatalf("submit: %q %v", id, err)
	}
	if _, err := sub.Submit(context.Background(), path, nil); err != nil {
		t.Fatal(err)
	}
	if got := RecordedJobs(out); len(got) != 2 || got[1] != "77" {
		t.Errorf("recorded jobs %v, want 41 and 77", got)
	}
	if err := (&Submitter{Slurm: &Slurm{}}).CheckSbatch("tune", "scripts"); err != nil && !strings.Contains(err.Error(), "tune --executor slurm: sbatch not found") {
		t.Errorf("check: %v", err)
	}
}

// The lines of a dry run, of a finished suite and of one cell.
func TestOutcomeLines(t *testing.T) {
	out := t.TempDir()
	jobs := []Job{{Name: "a", Dir: filepath.Join(out, "a"), Args: []string{"run"}}, {Name: "b", Dir: filepath.Join(out, "b"), Args: []string{"run"}}}
	os.MkdirAll(jobs[0].Dir, 0o755)
	record.WriteAtomic(filepath.Join(jobs[0].Dir, "run.json"), record.Run{Status: "done"})
	var b bytes.Buffer
	WritePlan(&b, jobs, "dmlbench", out, &Claimer{})
	if !strings.HasPrefix(b.String(), "done   0 a\n") || !strings.Contains(b.String(), "todo   1 b\n") || !strings.HasSuffix(b.String(), "2 runs, 1 to do, output in "+out+"\n") {
		t.Errorf("plan:\n%s", b.String())
	}
	b.Reset()
	res := &Result{Done: []string{"b"}, Skipped: []string{"a"}, Interrupted: []string{"c"}}
	res.WriteSummary(&b, 3, "runs", nil)
	if want := "suite: 3 runs: 1 done now, 1 done before, 0 failed, 1 interrupted; results in runs\nnext: dmlbench report runs --format markdown\n"; b.String() != want {
		t.Errorf("summary %q, want %q", b.String(), want)
	}
	if got := (&Result{Busy: []string{"a"}}).CellOutcome(4); got != "suite: cell 4 is run by another process: nothing to do" {
		t.Errorf("cell outcome %q", got)
	}
	if got := (&Result{Failed: []string{"a"}}).CellOutcome(4); got != "" {
		t.Errorf("a failed cell's outcome %q, want none (its error says it)", got)
	}
	var none *SlurmConfig
	if none.Parallel() != 0 || (&SlurmConfig{MaxParallel: 3}).Parallel() != 3 {
		t.Error("SlurmConfig.Parallel")
	}
}
