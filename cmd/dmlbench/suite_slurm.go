package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
)

// suiteCell runs one cell (suite.RunOneCell).
func suiteCell(c *cli.Context, jobs []suite.Job, bin string, claims *suite.Claimer) error {
	if c.String("executor") != "local" {
		if n := c.Int("cell"); n >= 0 && n < len(jobs) {
			return usagef("--cell runs the cell here: leave out --executor")
		}
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return suite.RunOneCell(ctx, suiteRunner(c, bin, 1, claims), jobs, c.Int("cell"), c.Bool("dry-run"), c.App.Writer, c.App.ErrWriter)
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
