package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/trainers"
)

func addSuite() {
	register(&cli.Command{
		Name:        "suite",
		Usage:       "run a grid of experiments (datasets × losses × miners × samplers × … × seeds), resumable",
		UsageText:   "dmlbench suite SUITE.yaml [--jobs N] [--out DIR] [--dry-run] [--executor local|slurm] [--cell N]\n   dmlbench suite status SUITE.yaml [--out DIR]",
		Description: helpText("suite"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "runs in flight at once"},
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the suite file's out)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the runs and their state, run nothing (--executor slurm: write the batch script, submit nothing)"},
			&cli.BoolFlag{Name: "fail-fast", Usage: "start no new run after a failure"},
			&cli.StringFlag{Name: "bin", Usage: "dmlbench binary to execute (default: this one)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar"},
			&cli.StringFlag{Name: "executor", Value: "local", Usage: "where the runs execute: local | slurm (a job array, see docs/slurm.md)"},
			&cli.IntFlag{Name: "cell", Value: -1, DefaultText: "all", Usage: "run only cell `N` (0-based, the order of --dry-run; what each Slurm array task runs)"},
			suiteMaxCellsFlag(),
		},
		Action: suiteAction,
		Subcommands: []*cli.Command{{
			Name:        "status",
			Usage:       "one line per cell (done, running, pending, failed) and a summary with an ETA",
			UsageText:   "dmlbench suite status SUITE.yaml [--out DIR]",
			Description: helpText("suite-status"),
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the suite file's out)"},
				suiteMaxCellsFlag(),
			},
			Action: suiteStatusAction,
		}},
	})
}

func suiteMaxCellsFlag() *cli.IntFlag {
	return &cli.IntFlag{Name: "max-cells", Value: suite.DefaultMaxCells, Usage: "refuse a suite with more cells than `N` (counted before the grids are expanded)"}
}

func suiteAction(c *cli.Context) error {
	arg, err := oneArg(c, "suite", "suite file")
	if err != nil {
		return err
	}
	if c.Int("jobs") < 1 {
		return usagef("--jobs must be ≥ 1 (got %d)", c.Int("jobs"))
	}
	executor := c.String("executor")
	if executor != "local" && executor != "slurm" {
		return usagef("--executor must be local or slurm (got %q)", executor)
	}
	spec, out, jobs, err := suite.LoadCells(arg, c.String("out"), c.Int("max-cells"))
	if err != nil {
		return suiteProblems(c, arg, err)
	}
	bin := c.String("bin")
	if bin == "" {
		// The cells run this binary: check the whole file against its
		// names and flags before anything runs (--dry-run included).
		if err := spec.Check(jobs, suiteChecker(c.App)); err != nil {
			return suiteProblems(c, arg, err)
		}
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("suite: cannot find this binary: %w", err)
		}
	}
	claims := &suite.Claimer{Timeout: spec.ClaimTimeout(), JobAlive: (&suite.Slurm{}).JobAlive}
	if c.IsSet("cell") {
		return suiteCell(c, jobs, bin, claims)
	}
	if executor == "slurm" {
		return suiteSlurm(c, spec, arg, out, jobs, bin, claims)
	}
	if c.Bool("dry-run") {
		suite.WritePlan(c.App.Writer, jobs, bin, out, claims)
		return nil
	}
	if err := suite.WriteManifest(out, arg, jobs); err != nil {
		return err
	}
	r := suiteRunner(c, bin, c.Int("jobs"), claims)
	r.FailFast = c.Bool("fail-fast")
	if !c.Bool("quiet") && reportIsTTY(c.App.ErrWriter) {
		r.Progress = c.App.ErrWriter
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := r.Run(ctx, jobs)
	if res != nil {
		res.WriteSummary(c.App.ErrWriter, len(jobs), out, err)
	}
	return err
}

// suiteProblems is the usage error of a suite file that does not check
// out (a *suite.ProblemsError): one problem is the error itself; several
// are written to stderr one per line, and the error counts them. Other
// errors are returned as they are.
func suiteProblems(c *cli.Context, file string, err error) error {
	var pe *suite.ProblemsError
	if !errors.As(err, &pe) {
		return err // not the file's content (it cannot be read, …)
	}
	if len(pe.Problems) == 1 {
		return usagef("suite %s: %s", file, pe.Problems[0])
	}
	return usageError{Err: pe.List(c.App.ErrWriter, "suite "+file)}
}

// suiteRunner is the Runner of every suite invocation: jobs runs at once,
// the claims guarding each cell, and --resume added for a cell whose
// directory holds the trainer's checkpoint.
func suiteRunner(c *cli.Context, bin string, jobs int, claims *suite.Claimer) *suite.Runner {
	return &suite.Runner{Bin: bin, Jobs: jobs, Log: c.App.ErrWriter, Version: Version,
		ResumeFile: trainers.CheckpointFile, ResumeFlag: "--resume", Claims: claims}
}
