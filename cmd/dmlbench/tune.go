package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune"
)

func addTune() {
	register(&cli.Command{
		Name:        "tune",
		Usage:       "tune every method with the same budget by class-disjoint cross-validation, then test the best configurations (fair comparison)",
		UsageText:   "dmlbench tune SPEC.yaml [--out DIR] [--executor local|slurm] [--parallel N] [--cell N]\n   dmlbench tune status SPEC.yaml [--out DIR]",
		Description: helpText("tune"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the spec's out)"},
			&cli.IntFlag{Name: "parallel", Aliases: []string{"j"}, Value: 1, Usage: "cells run at once (local executor)"},
			&cli.StringFlag{Name: "executor", Value: "local", Usage: "local | slurm (job arrays, see docs/tune.md)"},
			&cli.IntFlag{Name: "cell", Value: -1, DefaultText: "all", Usage: "run only cell `N` (what a Slurm array task runs)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "write the cells that can run now and print them; run nothing (slurm: write the script, submit nothing)"},
			&cli.StringFlag{Name: "bin", Usage: "dmlbench binary the cells execute (default: this one)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no per-cell lines (warnings and errors only)"},
			maxCellsFlag,
		},
		Action: tuneAction,
		Subcommands: []*cli.Command{{
			Name:      "status",
			Usage:     "per method: trials done and best validation score; cells running, pending or failed; ETA",
			UsageText: "dmlbench tune status SPEC.yaml [--out DIR]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the spec's out)"}, maxCellsFlag},
			Action:    tuneStatusAction,
		}, {
			Name:      "cell",
			Usage:     "run one cell directory (what the cells of tune execute)",
			UsageText: "dmlbench tune cell DIR [--resume]",
			Hidden:    true,
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "resume", Usage: "continue from DIR/checkpoint.gob"},
				&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "accepted for symmetry with run"},
			},
			Action: tuneCellAction,
		}},
	})
}

var maxCellsFlag = &cli.IntFlag{Name: "max-cells", Value: tune.DefaultMaxCells, Usage: "refuse a spec with more cells than `N` (methods × folds × (budget + final seeds))"}

// tuneLoad reads the spec named by the one argument, checks it against its
// data set and against the output directory's (tune.Plan.CheckSpec), and
// lays out its cells.
func tuneLoad(c *cli.Context, what string) (*tune.Plan, tune.Change, error) {
	arg, err := oneArg(c, what, "spec file")
	if err != nil {
		return nil, tune.Change{}, err
	}
	spec, err := tune.Load(arg, tune.Options{MaxCells: c.Int("max-cells")})
	if err != nil {
		return nil, tune.Change{}, tuneProblems(c, arg, err)
	}
	plan := &tune.Plan{Spec: spec, Out: spec.OutDir(c.String("out")), Warn: c.App.ErrWriter}
	change, err := plan.CheckSpec()
	return plan, change, err
}

func tuneAction(c *cli.Context) error {
	plan, change, err := tuneLoad(c, "tune")
	if err != nil {
		return err
	}
	if c.Int("parallel") < 1 {
		return usagef("--parallel must be ≥ 1 (got %d)", c.Int("parallel"))
	}
	executor := c.String("executor")
	if executor != "local" && executor != "slurm" {
		return usagef("--executor must be local or slurm (got %q)", executor)
	}
	bin := c.String("bin")
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("tune: cannot find this binary: %w", err)
		}
	}
	claims := &suite.Claimer{Timeout: (&suite.Spec{Slurm: plan.Spec.Slurm}).ClaimTimeout(), JobAlive: (&suite.Slurm{}).JobAlive}
	if err := os.MkdirAll(plan.Out, 0o755); err != nil {
		return err
	}
	if c.IsSet("cell") {
		return tuneCellN(c, plan, bin, claims)
	}
	if change.Restart && !c.Bool("dry-run") {
		fmt.Fprintf(c.App.ErrWriter, "tune: the spec changed, but no cell of %s had produced anything: starting it over\n", plan.Out)
		if err := plan.Restart(); err != nil {
			return err
		}
	}
	if done, err := plan.Finished(); err != nil || done {
		if done {
			fmt.Fprintf(c.App.ErrWriter, "tune: %s is finished; nothing to do (dmlbench report %s)\n", plan.Out, plan.Out)
		}
		return err
	}
	if change.Extended {
		fmt.Fprintf(c.App.ErrWriter, "tune: the spec extends %s (%s): running the added work\n", plan.Out, strings.Join(change.Keys, ", "))
	}
	if executor == "slurm" {
		return tuneSlurm(c, plan, bin, claims)
	}
	return tuneLocal(c, plan, bin, claims)
}

// tuneLocal runs the cells batch after batch on this machine, then
// writes the results.
func tuneLocal(c *cli.Context, plan *tune.Plan, bin string, claims *suite.Claimer) error {
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	quiet := c.Bool("quiet")
	r := suiteRunner(c, bin, c.Int("parallel"), claims)
	r.Name = "tune"
	if quiet {
		r.Log = nil
	} else if reportIsTTY(c.App.ErrWriter) {
		r.Progress = c.App.ErrWriter
	}
	return plan.RunLocal(ctx, r, tune.LocalOptions{DryRun: c.Bool("dry-run"), Quiet: quiet, Stdout: c.App.Writer, Log: c.App.ErrWriter, Version: Version})
}

// tuneCellN runs cell N (a Slurm array task): claimed, resumed from its
// checkpoint, GOMAXPROCS from SLURM_CPUS_PER_TASK.
func tuneCellN(c *cli.Context, plan *tune.Plan, bin string, claims *suite.Claimer) error {
	n := c.Int("cell")
	j, err := plan.Job(n)
	if err != nil {
		return usagef("--cell: %v", err)
	}
	if _, err := os.Stat(filepath.Join(j.Dir, tune.CellFile)); err != nil {
		return fmt.Errorf("tune: cell %d (%s) has not been proposed yet (run dmlbench tune %s first)", n, j.Name, plan.Spec.File)
	}
	r := suiteRunner(c, bin, 1, claims)
	r.Name = "tune"
	r.Env = append(r.Env, slurmTaskEnv()...)
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(c.App.ErrWriter, "tune: cell %d: %s\n", n, j.Name)
	res, err := r.Run(ctx, []suite.Job{j})
	if err != nil && plan.OnlyTrialFailures(res) {
		return nil
	}
	return err
}

func tuneCellAction(c *cli.Context) error {
	arg, err := oneArg(c, "tune cell", "cell directory")
	if err != nil {
		return err
	}
	dir := arg
	cell, err := tune.ReadCell(dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return tune.RunCell(ctx, dir, tune.LoadData(cell.Config), tune.CellOptions{Resume: c.Bool("resume"), Version: Version, Warn: c.App.ErrWriter})
}

func tuneStatusAction(c *cli.Context) error {
	plan, change, err := tuneLoad(c, "tune status")
	if err != nil {
		return err
	}
	return plan.WriteStatus(c.Context, c.App.Writer, change)
}

// tuneSlurm submits the cells that can run now as a job array and a
// follow-up job (afterany) that runs this command again to propose and
// submit the next batch, or to finish.
func tuneSlurm(c *cli.Context, plan *tune.Plan, bin string, claims *suite.Claimer) error {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if plan.Spec.SearchRepeats > 1 {
		return usagef("tune --executor slurm: search-repeats runs with --executor local only")
	}
	sub := &suite.Submitter{Out: abs(plan.Out), Slurm: &suite.Slurm{}, Claims: claims, DryRun: c.Bool("dry-run")}
	return plan.SubmitSlurm(c.Context, sub, abs(bin), abs(plan.Spec.File), Version, c.App.ErrWriter, c.App.Writer)
}
