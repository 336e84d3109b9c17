package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
)

// slurmTaskEnv is the environment a cell run by a Slurm array task adds:
// GOMAXPROCS from SLURM_CPUS_PER_TASK, so the cell uses the CPUs Slurm
// gave it rather than every CPU of the node.
func slurmTaskEnv() []string {
	if k, err := strconv.Atoi(os.Getenv("SLURM_CPUS_PER_TASK")); err == nil && k > 0 {
		return []string{"GOMAXPROCS=" + strconv.Itoa(k)}
	}
	return nil
}

// suiteCell runs one cell (`suite FILE --cell N`, what a Slurm array task
// runs): claimed, resumed from its checkpoint when one exists, with
// GOMAXPROCS from SLURM_CPUS_PER_TASK. A cell that is done or that another
// process runs is not an error.
func suiteCell(c *cli.Context, jobs []suite.Job, bin string, claims *suite.Claimer) error {
	n := c.Int("cell")
	if n < 0 || n >= len(jobs) {
		return usagef("--cell %d is out of range: the suite has %d cells (0 to %d)", n, len(jobs), len(jobs)-1)
	}
	if c.String("executor") != "local" {
		return usagef("--cell runs the cell here: leave out --executor")
	}
	j := jobs[n]
	env := slurmTaskEnv()
	if c.Bool("dry-run") {
		state := "todo"
		if suite.IsDone(j.Dir) {
			state = "done"
		}
		fmt.Fprintf(c.App.Writer, "%-4s %3d %s\n     %s\n", state, n, j.Name, suite.CommandLine(bin, j))
		return nil
	}
	r := suiteRunner(c, bin, 1, claims)
	r.Env = env
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(c.App.ErrWriter, "suite: cell %d of %d: %s (%s)\n", n, len(jobs), j.Name, j.Dir)
	res, err := r.Run(ctx, []suite.Job{j})
	if res != nil && res.CellOutcome(n) != "" {
		fmt.Fprintln(c.App.ErrWriter, res.CellOutcome(n))
	}
	return err
}

// suiteSlurm writes OUT/slurm/suite.sbatch over the cells to run and
// submits it (not with --dry-run).
func suiteSlurm(c *cli.Context, spec *suite.Spec, file, out string, jobs []suite.Job, bin string, claims *suite.Claimer) error {
	for _, p := range []*string{&bin, &file, &out} {
		a, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("suite: %w", err)
		}
		*p = a
	}
	sub := &suite.Submitter{Out: out, Slurm: &suite.Slurm{}, Claims: claims, DryRun: c.Bool("dry-run")}
	return sub.SubmitSuite(c.Context, spec, file, bin, jobs, c.App.ErrWriter, c.App.Writer)
}

func suiteStatusAction(c *cli.Context) error {
	arg, err := oneArg(c, "suite status", "suite file")
	if err != nil {
		return err
	}
	spec, out, jobs, err := suite.LoadCells(arg, c.String("out"), c.Int("max-cells"))
	if err != nil {
		return err
	}
	sl := &suite.Slurm{}
	cells := suite.Status(c.Context, out, jobs, suite.StatusOptions{
		Slurm:  sl,
		Claims: &suite.Claimer{Timeout: spec.ClaimTimeout(), JobAlive: sl.JobAlive},
	})
	return suite.WriteStatus(c.App.Writer, cells, spec.Slurm.Parallel())
}
