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
		Name:      "suite",
		Usage:     "run a grid of experiments (datasets × losses × miners × samplers × … × seeds), resumable",
		UsageText: "dmlbench suite SUITE.yaml [--jobs N] [--out DIR] [--dry-run] [--executor local|slurm] [--cell N]\n   dmlbench suite status SUITE.yaml [--out DIR]",
		Description: `Expands the grid of SUITE.yaml and runs every point as its own process of this
binary: 'dmlbench run --dataset D --loss L --miner M --sampler S [--regularizer R]
[--embed-dim E] [--batch-size B] --seed K [--epochs N] --out DIR [--quiet] EXTRA…'.
Eval entries run 'dmlbench eval --emb E --labels L --format json' and store the result
as DIR/run.json. Run directories are named from the grid point, e.g.
OUT/omniglot/margin-distance-spc2/s0; each holds run.json and log.txt (the run's output).
Runs whose run.json has status "done" are skipped, so re-running a killed suite loses at
most the runs in flight; an interrupted run that left a checkpoint is continued with
--resume. Ctrl-C stops the runs in flight, which keep their checkpoints: they are listed
as interrupted, and the same command again resumes them (docs/recovery.md). A progress
bar with ETA goes to stderr. Exit status 1 when any run failed (the others still run
unless --fail-fast).

The whole file is checked before anything runs, --dry-run included: unknown keys (with
the nearest known one), integers and booleans, the same seed written twice, every data
set, loss, miner and sampler name, and every cell's flags (extra: included) as 'run' or
'eval' would parse and check them; every problem is listed once, exit status 2.
'epochs: 0' means 0 epochs (only the untrained evaluation), at the top level and in a grid.

Cells: cell N is the N-th run of --dry-run's list, counting from 0 (grids in file
order, seed varying slowest, then the eval entries); the numbering changes only
when the suite file does. --cell N runs that cell alone. Before running a cell the
suite claims it (DIR/claim.json, create-exclusive, safe on NFS, with a heartbeat):
a cell another suite process is running is left to it, so several invocations, on
one machine or many, never run a cell twice. A claim whose holder died is taken over
(same host: at once; elsewhere: when its Slurm job has left the queue, or after
slurm.claim-timeout without heartbeat, default 10m). When the suite is killed, even
with kill -9, the kernel kills its running children (Linux).

--executor slurm (see docs/slurm.md) writes OUT/slurm/suite.sbatch, a job array over
exactly the unfinished cells that no one runs or has queued ('#SBATCH --array=…%M',
M = slurm.max-parallel), with the resources of the suite file's slurm: block, task
logs in OUT/slurm/logs/cellN_jobJ.out, and submits it with 'sbatch --parsable'
(job ids recorded in OUT/slurm/jobs.txt; --dry-run only writes the script). Each task
runs 'dmlbench suite SUITE.yaml --out OUT --cell $SLURM_ARRAY_TASK_ID' with
GOMAXPROCS = SLURM_CPUS_PER_TASK; a task killed by the scheduler keeps its checkpoint,
and submitting again continues it (--resume). 'dmlbench suite status SUITE.yaml'
prints each cell as done, running, pending or failed (with its log and last error
line), from the run directories, squeue and sacct, and a summary with an ETA.
   slurm:
     partition: gpu
     time: "04:00:00"
     cpus-per-task: 4
     mem: 16G
     gpus: 1
     account: mylab
     max-parallel: 20
     extra: [--qos=normal]

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
See docs/examples/ and 'go doc github.com/dmlbench/dmlbench/suite'.

Examples:
   dmlbench suite docs/examples/omniglot-suite.yaml
   dmlbench suite docs/examples/omniglot-suite.yaml --jobs 2 --out runs/try1
   dmlbench suite docs/examples/omniglot-suite.yaml --dry-run
   dmlbench suite docs/examples/omniglot-suite.yaml --executor slurm
   dmlbench suite status docs/examples/omniglot-suite.yaml
   dmlbench report runs/omniglot-example --format markdown`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 1, Usage: "runs in flight at once"},
			&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the suite file's out)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the runs and their state, run nothing (--executor slurm: write the batch script, submit nothing)"},
			&cli.BoolFlag{Name: "fail-fast", Usage: "start no new run after a failure"},
			&cli.StringFlag{Name: "bin", Usage: "dmlbench binary to execute (default: this one)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar"},
			&cli.StringFlag{Name: "executor", Value: "local", Usage: "where the runs execute: local | slurm (a job array, see docs/slurm.md)"},
			&cli.IntFlag{Name: "cell", Value: -1, DefaultText: "all", Usage: "run only cell `N` (0-based, the order of --dry-run; what each Slurm array task runs)"},
			suiteMaxCellsFlag,
		},
		Action: suiteAction,
		Subcommands: []*cli.Command{{
			Name:      "status",
			Usage:     "one line per cell (done, running, pending, failed) and a summary with an ETA",
			UsageText: "dmlbench suite status SUITE.yaml [--out DIR]",
			Description: `Reads the run directories (run.json, claim.json, log.txt) and, where the commands
exist, squeue and sacct for the jobs recorded in OUT/slurm/jobs.txt. A failed cell shows
the log to read (the Slurm task log, else the run's log.txt) and its last error line.
The ETA is the mean time of the finished cells × the cells left ÷ the cells running.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "output `DIR` (overrides the suite file's out)"},
				suiteMaxCellsFlag,
			},
			Action: suiteStatusAction,
		}},
	})
}

var suiteMaxCellsFlag = &cli.IntFlag{Name: "max-cells", Value: suite.DefaultMaxCells, Usage: "refuse a suite with more cells than `N` (counted before the grids are expanded)"}

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
		todo, busy := 0, 0
		for i, j := range jobs {
			state := "todo"
			if suite.IsDone(j.Dir) {
				state = "done"
			} else if _, live := claims.Live(j.Dir); live {
				state = "busy" // another suite process runs it
				busy++
			} else {
				todo++
			}
			fmt.Fprintf(c.App.Writer, "%-4s %3d %s\n     %s\n", state, i, j.Name, suite.CommandLine(bin, j))
		}
		elsewhere := ""
		if busy > 0 {
			elsewhere = fmt.Sprintf(", %d run by another process", busy)
		}
		fmt.Fprintf(c.App.Writer, "%d runs, %d to do%s, output in %s\n", len(jobs), todo, elsewhere, out)
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
		busy := ""
		if len(res.Interrupted) > 0 {
			busy = fmt.Sprintf(", %d interrupted", len(res.Interrupted))
		}
		if len(res.Busy) > 0 {
			busy += fmt.Sprintf(", %d run by another process", len(res.Busy))
		}
		fmt.Fprintf(c.App.ErrWriter, "suite: %d runs: %d done now, %d done before, %d failed%s; results in %s\n",
			len(jobs), len(res.Done), len(res.Skipped), len(res.Failed), busy, out)
		if len(res.Failed) == 0 && err == nil {
			fmt.Fprintf(c.App.ErrWriter, "next: dmlbench report %s --format markdown\n", out)
		}
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
	for _, p := range pe.Problems {
		fmt.Fprintf(c.App.ErrWriter, "suite %s: %s\n", file, p)
	}
	return usagef("suite %s: %d problems (listed above); nothing was run", file, len(pe.Problems))
}

// suiteRunner is the Runner of every suite invocation: jobs runs at once,
// the claims guarding each cell, and --resume added for a cell whose
// directory holds the trainer's checkpoint.
func suiteRunner(c *cli.Context, bin string, jobs int, claims *suite.Claimer) *suite.Runner {
	return &suite.Runner{Bin: bin, Jobs: jobs, Log: c.App.ErrWriter, Version: Version,
		ResumeFile: trainers.CheckpointFile, ResumeFlag: "--resume", Claims: claims}
}
