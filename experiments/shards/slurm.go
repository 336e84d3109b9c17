package shards

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
)

// Submitted is what Slurm submitted: the job array over Shards (none
// when every shard is done or queued) and the merge job.
type Submitted struct {
	Array, Merge string
	Shards       []int
}

// mergeJobFile records the id of the newest merge job.
func mergeJobFile(dir string) string { return filepath.Join(suite.SlurmDir(dir), "merge-job.txt") }

// Slurm submits the shards of j that have no partial and are not queued
// by an earlier submission as one job array (DIR/slurm/eval.sbatch), and
// a merge job (DIR/slurm/merge.sbatch) that runs when the array has
// succeeded (afterok) and earlier arrays still queued have ended
// (afterany; the merge refuses missing shards by name). A merge job of an
// earlier submission still pending is cancelled. cfg gives the #SBATCH
// resources (nil: Slurm's defaults); dryRun writes the scripts only.
func Slurm(ctx context.Context, sl *suite.Slurm, j Job, cfg *suite.SlurmConfig, dryRun bool, log io.Writer) (Submitted, error) {
	var s Submitted
	if cfg == nil {
		cfg = &suite.SlurmConfig{}
	}
	sub := &suite.Submitter{Out: j.Dir, Slurm: sl, DryRun: dryRun}
	if err := sub.CheckSbatch("eval", "scripts"); err != nil {
		return s, err
	}
	if err := os.MkdirAll(filepath.Join(suite.SlurmDir(j.Dir), "logs"), 0o755); err != nil {
		return s, err
	}
	if err := j.writeManifest(ResultFile(j.Dir)); err != nil {
		return s, err
	}
	var older []string // arrays of earlier submissions still queued
	queued := map[int]suite.QueueEntry{}
	if q, ok := sl.Queue(ctx); ok {
		queued = suite.QueuedCells(q, suite.RecordedJobs(j.Dir))
		for _, id := range suite.RecordedJobs(j.Dir) {
			for qid := range q {
				if strings.HasPrefix(qid, id+"_") || qid == id {
					older = append(older, id)
					break
				}
			}
		}
	}
	for _, i := range j.Missing() {
		if queued[i].ID == "" {
			s.Shards = append(s.Shards, i)
		}
	}
	fmt.Fprintf(log, "eval: %d shards: %d to submit, %d queued, %d done\n", j.Shards, len(s.Shards), len(queued), j.Shards-len(j.Missing()))
	name := cmpOr(cfg.JobName, "dmlbench-eval")
	deps := make([]string, 0, 2)
	if len(s.Shards) > 0 {
		path, err := sub.WriteScript("eval.sbatch", arrayScript(j, cfg, name, s.Shards))
		if err != nil || dryRun {
			return s, err
		}
		if s.Array, err = sub.Submit(ctx, path, s.Shards); err != nil {
			return s, err
		}
		deps = append(deps, "afterok:"+s.Array)
	}
	if len(older) > 0 {
		deps = append(deps, "afterany:"+strings.Join(older, ":"))
	}
	path, err := sub.WriteScript("merge.sbatch", mergeScript(j, cfg, name, strings.Join(deps, ",")))
	if err != nil || dryRun {
		return s, err
	}
	cancelOldMerge(ctx, sl, j.Dir)
	if s.Merge, err = sl.Submit(ctx, path); err != nil {
		return s, err
	}
	return s, atomicfile.WriteBytes(mergeJobFile(j.Dir), []byte(s.Merge+"\n"))
}

// cancelOldMerge cancels the merge job of an earlier submission: it
// would wait on arrays that can no longer succeed.
func cancelOldMerge(ctx context.Context, sl *suite.Slurm, dir string) {
	b, err := os.ReadFile(mergeJobFile(dir))
	id := strings.TrimSpace(string(b))
	if err != nil || id == "" {
		return
	}
	if sl.Run != nil {
		_, _ = sl.Run(ctx, "scancel", id)
		return
	}
	_ = exec.CommandContext(ctx, "scancel", id).Run()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// arrayScript runs shard $SLURM_ARRAY_TASK_ID of each task, with
// GOMAXPROCS from the CPUs Slurm gave it and GOMEMLIMIT from its memory.
func arrayScript(j Job, cfg *suite.SlurmConfig, name string, shards []int) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	b.WriteString("# Written by `dmlbench eval --executor slurm`: one array task per query shard\n")
	b.WriteString("# without a partial result. Submitting again is safe: done shards are skipped.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", suite.DirectiveValue(name))
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", suite.ArraySpec(shards, cfg.MaxParallel))
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", suite.DirectiveValue(suite.LogPattern(j.Dir)))
	cfg.WriteDirectives(&b)
	b.WriteString("set -u\n")
	b.WriteString("if [ -n \"${SLURM_CPUS_PER_TASK:-}\" ]; then export GOMAXPROCS=$SLURM_CPUS_PER_TASK; fi\n")
	// The collector keeps to 90 % of the task's memory (--mem, in MB),
	// rather than doubling the heap past it.
	b.WriteString("if [ -n \"${SLURM_MEM_PER_NODE:-}\" ]; then export GOMEMLIMIT=$((SLURM_MEM_PER_NODE * 9 / 10))MiB; fi\n")
	args := append(append([]string{j.Bin}, j.Args...), "--partial", j.Dir)
	fmt.Fprintf(&b, "exec %s --shard \"$SLURM_ARRAY_TASK_ID/%d\"\n", suite.ShellJoin(args), j.Shards)
	return b.String()
}

// mergeScript merges the partials into DIR/result.json (the table goes to
// the job's log) once deps are satisfied.
func mergeScript(j Job, cfg *suite.SlurmConfig, name, deps string) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	b.WriteString("# Written by `dmlbench eval --executor slurm`: merges the shards' partial results.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", suite.DirectiveValue(name+"-merge"))
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", suite.DirectiveValue(filepath.Join(suite.SlurmDir(j.Dir), "logs", "merge_job%j.out")))
	if deps != "" {
		fmt.Fprintf(&b, "#SBATCH --dependency=%s\n", deps)
	}
	cfg.WriteDirectives(&b)
	b.WriteString("set -u\n")
	b.WriteString("if [ -n \"${SLURM_CPUS_PER_TASK:-}\" ]; then export GOMAXPROCS=$SLURM_CPUS_PER_TASK; fi\n")
	b.WriteString("if [ -n \"${SLURM_MEM_PER_NODE:-}\" ]; then export GOMEMLIMIT=$((SLURM_MEM_PER_NODE * 9 / 10))MiB; fi\n")
	fmt.Fprintf(&b, "exec %s\n", suite.ShellJoin(append(j.MergeArgs(), "--out", ResultFile(j.Dir))))
	return b.String()
}
