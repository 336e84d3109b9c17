package suite

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// SlurmTaskEnv is the environment a cell run by a Slurm array task adds:
// GOMAXPROCS from SLURM_CPUS_PER_TASK, so the cell uses the CPUs Slurm
// gave it rather than every CPU of the node.
func SlurmTaskEnv() []string {
	if k, err := strconv.Atoi(os.Getenv("SLURM_CPUS_PER_TASK")); err == nil && k > 0 {
		return []string{"GOMAXPROCS=" + strconv.Itoa(k)}
	}
	return nil
}

// RunOneCell runs cell n of jobs with r (`suite FILE --cell N`, what a
// Slurm array task runs): claimed, resumed from its checkpoint when one
// exists, with SlurmTaskEnv. A cell that is done or that another process
// runs is not an error. dryRun prints the cell's state and command line
// on stdout instead.
func RunOneCell(ctx context.Context, r *Runner, jobs []Job, n int, dryRun bool, stdout, stderr io.Writer) error {
	if n < 0 || n >= len(jobs) {
		return usage.Errorf("--cell %d is out of range: the suite has %d cells (0 to %d)", n, len(jobs), len(jobs)-1)
	}
	j := jobs[n]
	if dryRun {
		state := "todo"
		if IsDone(j.Dir) {
			state = "done"
		}
		_, err := fmt.Fprintf(stdout, "%-4s %3d %s\n     %s\n", state, n, j.Name, CommandLine(r.Bin, j))
		return err
	}
	r.Env = SlurmTaskEnv()
	fmt.Fprintf(stderr, "suite: cell %d of %d: %s (%s)\n", n, len(jobs), j.Name, j.Dir)
	res, err := r.Run(ctx, []Job{j})
	if res != nil && res.CellOutcome(n) != "" {
		fmt.Fprintln(stderr, res.CellOutcome(n))
	}
	return err
}
