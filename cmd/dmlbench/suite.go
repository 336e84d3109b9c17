package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports/suite"
	"github.com/dmlbench/dmlbench/trainers"
)

func init() {
	register(&cli.Command{
		Name:      "suite",
		Usage:     "run a grid of experiments (datasets × losses × miners × samplers × … × seeds), resumable",
		UsageText: "dmlbench suite SUITE.yaml [--jobs N] [--out DIR] [--dry-run]",
		Description: `Expands the grid of SUITE.yaml and runs every point as its own process of this
binary: 'dmlbench run --dataset D --loss L --miner M --sampler S [--regularizer R]
[--embed-dim E] [--batch-size B] --seed K [--epochs N] --out DIR [--quiet] EXTRA…'.
Eval entries run 'dmlbench eval --emb E --labels L --format json' and store the result
as DIR/run.json. Run directories are named from the grid point, e.g.
OUT/omniglot/margin-distance-spc2/s0; each holds run.json and log.txt (the run's output).
Runs whose run.json has status "done" are skipped, so re-running a killed suite loses at
most the runs in flight; an interrupted run that left a checkpoint is continued with
--resume. A progress bar with ETA goes to stderr. Exit status 1 when any
run failed (the others still run unless --fail-fast).

Suite file (paths relative to the file):
   out: runs/omniglot
   epochs: 5
   extra: --hidden 256
   grid:
     dataset: omniglot
     loss: [margin, triplet, contrastive]
     miner: distance
     sampler: spc-2
     embed-dim: [64]
     seed: [0, 1, 2]
   eval:
     - {name: imagenet, dataset: cub200, emb: cub.npy, labels: cub_labels.npy}
See docs/examples/ and 'go doc github.com/dmlbench/dmlbench/reports/suite'.

Examples:
   dmlbench suite docs/examples/omniglot-suite.yaml
   dmlbench suite suite.yaml --jobs 2 --out runs/try1
   dmlbench suite suite.yaml --dry-run
   dmlbench report runs/omniglot --format markdown`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "runs in flight at once"},
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the suite file's out)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the runs and their state, run nothing"},
			&cli.BoolFlag{Name: "fail-fast", Usage: "start no new run after a failure"},
			&cli.StringFlag{Name: "bin", Usage: "dmlbench binary to execute (default: this one)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar"},
		},
		Action: suiteAction,
	})
}

func suiteAction(c *cli.Context) error {
	args, err := reportArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("suite needs exactly one suite file (got %d arguments)", len(args))
	}
	if c.Int("jobs") < 1 {
		return usagef("--jobs must be ≥ 1 (got %d)", c.Int("jobs"))
	}
	spec, err := suite.Load(args[0])
	if err != nil {
		return err
	}
	out := spec.OutDir(c.String("out"))
	jobs, err := spec.Jobs(out)
	if err != nil {
		return err
	}
	bin := c.String("bin")
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("suite: cannot find this binary: %w", err)
		}
	}
	if c.Bool("dry-run") {
		todo := 0
		for _, j := range jobs {
			state := "todo"
			if suite.IsDone(j.Dir) {
				state = "done"
			} else {
				todo++
			}
			fmt.Fprintf(c.App.Writer, "%-4s %s\n     %s\n", state, j.Name, suite.CommandLine(bin, j))
		}
		fmt.Fprintf(c.App.Writer, "%d runs, %d to do, output in %s\n", len(jobs), todo, out)
		return nil
	}
	r := &suite.Runner{Bin: bin, Jobs: c.Int("jobs"), Log: c.App.ErrWriter, FailFast: c.Bool("fail-fast"), Version: Version,
		ResumeFile: trainers.CheckpointFile, ResumeFlag: "--resume"}
	if !c.Bool("quiet") && reportIsTTY(c.App.ErrWriter) {
		r.Progress = c.App.ErrWriter
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := r.Run(ctx, jobs)
	if res != nil {
		fmt.Fprintf(c.App.ErrWriter, "suite: %d runs: %d done now, %d done before, %d failed; results in %s\n",
			len(jobs), len(res.Done), len(res.Skipped), len(res.Failed), out)
		if len(res.Failed) == 0 && err == nil {
			fmt.Fprintf(c.App.ErrWriter, "next: dmlbench report %s --format markdown\n", out)
		}
	}
	return err
}
