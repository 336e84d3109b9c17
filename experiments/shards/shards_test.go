package shards

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/metrics/partial"
)

func TestParseShard(t *testing.T) {
	if sh, err := ParseShard("3/16"); err != nil || sh != (metrics.Shard{Index: 3, Count: 16}) {
		t.Fatalf("3/16: %v %v", sh, err)
	}
	for _, bad := range []string{"16/16", "-1/4", "2", "a/b", "1/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// fakeSlurm answers sbatch with job ids 11, 12, …, squeue with queue,
// and records every command.
type fakeSlurm struct {
	next   int
	queue  string
	called []string
}

func (f *fakeSlurm) run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.called = append(f.called, name+" "+strings.Join(args, " "))
	switch name {
	case "sbatch":
		f.next++
		return []byte(strconv.Itoa(10+f.next) + "\n"), nil
	case "squeue":
		return []byte(f.queue), nil
	}
	return nil, nil
}

// Slurm submits the shards without a partial as one array and a merge
// that depends on it; submitted again, it leaves out done and queued
// shards, waits for the queued array too and cancels the older merge.
func TestSlurmSubmitAndResubmit(t *testing.T) {
	dir := t.TempDir()
	j := Job{Bin: "/bin/dmlbench", Args: []string{"eval", "--emb", "e.npy", "--labels", "l.npy"}, Dir: dir, Shards: 4}
	f := &fakeSlurm{}
	sl := &suite.Slurm{Run: f.run}
	s, err := Slurm(context.Background(), sl, j, &suite.SlurmConfig{CPUsPerTask: 2}, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.Array != "11" || s.Merge != "12" || len(s.Shards) != 4 {
		t.Fatalf("first submission %+v", s)
	}
	array, _ := os.ReadFile(filepath.Join(dir, "slurm", "eval.sbatch"))
	merge, _ := os.ReadFile(filepath.Join(dir, "slurm", "merge.sbatch"))
	for _, want := range []string{"#SBATCH --array=0-3\n", "#SBATCH --cpus-per-task=2\n", `--shard "$SLURM_ARRAY_TASK_ID/4"`, "--partial " + dir, "export GOMEMLIMIT=$((SLURM_MEM_PER_NODE * 9 / 10))MiB"} {
		if !strings.Contains(string(array), want) {
			t.Errorf("array script lacks %q:\n%s", want, array)
		}
	}
	for _, want := range []string{"#SBATCH --dependency=afterok:11\n", "--merge " + dir, "--out " + ResultFile(dir)} {
		if !strings.Contains(string(merge), want) {
			t.Errorf("merge script lacks %q:\n%s", want, merge)
		}
	}
	// Shard 0 finished, shard 2 still runs in job 11; 1 and 3 failed.
	p := &metrics.Partial{Version: metrics.PartialVersion, Shard: metrics.Shard{Index: 0, Count: 4}}
	if err := partial.Write(dir, p, nil); err != nil {
		t.Fatal(err)
	}
	f.queue = "11_2|RUNNING\n12|PENDING\n"
	s, err = Slurm(context.Background(), sl, j, nil, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Shards) != 2 || s.Shards[0] != 1 || s.Shards[1] != 3 {
		t.Fatalf("resubmitted shards %v, want [1 3]", s.Shards)
	}
	merge, _ = os.ReadFile(filepath.Join(dir, "slurm", "merge.sbatch"))
	if !strings.Contains(string(merge), "#SBATCH --dependency=afterok:13,afterany:11\n") {
		t.Errorf("second merge script:\n%s", merge)
	}
	if !strings.Contains(strings.Join(f.called, "\n"), "scancel 12") {
		t.Errorf("the first merge job was not cancelled: %v", f.called)
	}
	var st strings.Builder
	if done, err := Status(context.Background(), sl, dir, &st); err != nil || done != 1 || !strings.Contains(st.String(), "shard 2/4  running  slurm 11_2") {
		t.Errorf("status: %d %v\n%s", done, err, st.String())
	}
}
