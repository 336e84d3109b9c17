package main

import (
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
			specOutFlag("the suite file's"),
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
				specOutFlag("the suite file's"),
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
		return suite.FileProblems(c.App.ErrWriter, arg, err)
	}
	bin := c.String("bin")
	if bin == "" {
		// The cells run this binary: check the whole file against its
		// names and flags before anything runs (--dry-run included).
		if err := spec.Check(jobs, suiteChecker(c.App)); err != nil {
			return suite.FileProblems(c.App.ErrWriter, arg, err)
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

// suiteRunner is the Runner of every suite invocation: jobs runs at once,
// the claims guarding each cell, and --resume added for a cell whose
// directory holds the trainer's checkpoint.
func suiteRunner(c *cli.Context, bin string, jobs int, claims *suite.Claimer) *suite.Runner {
	return &suite.Runner{Bin: bin, Jobs: jobs, Log: c.App.ErrWriter, Version: Version,
		ResumeFile: trainers.CheckpointFile, ResumeFlag: "--resume", Claims: claims}
}
