package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

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
			maxCellsFlag(),
		},
		Action: tuneAction,
		Subcommands: []*cli.Command{{
			Name:      "status",
			Usage:     "per method: trials done and best validation score; cells running, pending or failed; ETA",
			UsageText: "dmlbench tune status SPEC.yaml [--out DIR]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the spec's out)"}, maxCellsFlag()},
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

func maxCellsFlag() *cli.IntFlag {
	return &cli.IntFlag{Name: "max-cells", Value: tune.DefaultMaxCells, Usage: "refuse a spec with more cells than `N` (methods × folds × (budget + final seeds))"}
}

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
	bin := c.String("bin")
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("tune: cannot find this binary: %w", err)
		}
	}
	inv := tune.Invocation{Bin: bin, Executor: c.String("executor"), Parallel: c.Int("parallel"), OneCell: c.IsSet("cell"), Cell: c.Int("cell"), DryRun: c.Bool("dry-run"),
		Quiet: c.Bool("quiet"), Version: Version, Stdout: c.App.Writer, Stderr: c.App.ErrWriter}
	if reportIsTTY(c.App.ErrWriter) {
		inv.Progress = c.App.ErrWriter
	}
	return plan.Execute(c.Context, change, inv)
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
