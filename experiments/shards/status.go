package shards

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/metrics/partial"
)

// Status writes where the shards of the sharded eval in dir stand: done
// (with the seconds the shard took), queued or running (squeue), failed
// (sacct's state and the log's last line), or not started; then the
// merge. sl may be nil (no Slurm). It returns the number of shards done.
func Status(ctx context.Context, sl *suite.Slurm, dir string, w io.Writer) (int, error) {
	m, err := readManifest(dir)
	if err != nil {
		return 0, err
	}
	jobs := suite.RecordedJobs(dir)
	queued := map[int]suite.QueueEntry{}
	var acct map[string]string
	if sl != nil && len(jobs) > 0 {
		if q, ok := sl.Queue(ctx); ok {
			queued = suite.QueuedCells(q, jobs)
		}
		acct, _ = sl.Accounting(ctx, jobs)
	}
	done := 0
	for i := range m.Shards {
		sh := metrics.Shard{Index: i, Count: m.Shards}
		path := dir + string(os.PathSeparator) + partial.Name(sh)
		if p, _, err := partial.Read(path); err == nil {
			done++
			fmt.Fprintf(w, "shard %d/%d  done     rows %d…%d, %.1f s\n", i, m.Shards, p.Lo, p.Hi-1, p.Seconds)
			continue
		}
		if e := queued[i]; e.ID != "" {
			fmt.Fprintf(w, "shard %d/%d  %-8s slurm %s\n", i, m.Shards, strings.ToLower(e.State), e.ID)
			continue
		}
		if st, id := lastState(acct, jobs, i); st != "" {
			fmt.Fprintf(w, "shard %d/%d  %-8s slurm %s: %s\n", i, m.Shards, strings.ToLower(st), id, lastLine(suite.CellLog(dir, i)))
			continue
		}
		fmt.Fprintf(w, "shard %d/%d  todo\n", i, m.Shards)
	}
	switch _, err := os.Stat(m.Result); {
	case m.Result != "" && err == nil && done == m.Shards:
		fmt.Fprintf(w, "merge       done     %s\n", m.Result)
	case done == m.Shards:
		fmt.Fprintf(w, "merge       ready    %s\n", strings.Join(m.Merge, " "))
	default:
		fmt.Fprintf(w, "merge       waiting  for %d shards\n", m.Shards-done)
	}
	return done, nil
}

// lastState is sacct's state of shard i in the newest recorded job that
// ran it.
func lastState(acct map[string]string, jobs []string, i int) (string, string) {
	for k := len(jobs) - 1; k >= 0; k-- {
		id := fmt.Sprintf("%s_%d", jobs[k], i)
		if st := acct[id]; st != "" {
			return st, id
		}
	}
	return "", ""
}
