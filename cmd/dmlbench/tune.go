package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports"
)

func init() {
	register(&cli.Command{
		Name:      "tune",
		Usage:     "tune every method with the same budget by class-disjoint cross-validation, then test the best configurations (fair comparison)",
		UsageText: "dmlbench tune SPEC.yaml [--out DIR] [--executor local|slurm] [--parallel N] [--cell N]\n   dmlbench tune status SPEC.yaml [--out DIR]",
		Description: `Runs the protocol of Musgrave, Belongie & Lim 2020 on the data set of SPEC.yaml:
(1) for every method, 'budget' trials proposed by TPE (Bergstra et al. 2011) or random
search; a trial trains on k−1 folds of the TRAINING classes and scores 'objective'
(default MAP@R) on the remaining fold at its best epoch, for each of the k 'folds'
(default 4): its score is the mean over folds. The test classes are never read.
(2) per method, the best trial's configuration is retrained on each fold's training
classes for the epochs that fold chose on validation, once per final seed, and scored
on the TEST classes: "separated" (mean over the k models) and "concatenated" (their
test embeddings side by side, k·d dimensions).

Every training run is a cell run by the suite machinery (claims, resume after kill -9,
one process per cell): trials × folds, then methods × folds × seeds. Trials are
proposed in batches of max-parallel per method, deterministically (same spec, same
trials). --executor local runs --parallel cells at once until done; --executor slurm
submits the cells that can run now as a job array plus a follow-up job that proposes
and submits the next batch. Only divergence or a refused setting fails a trial; any
other error fails the cell, which the next run retries. The whole spec is checked
before anything runs, against its data set too, every problem listed once. Re-running
with the same spec continues or does nothing; a spec that only extends the directory
(larger budget, more final seeds or search repeats, new methods) runs the added work;
any other edit is refused, naming the changed keys.
Output: OUT/trials/METHOD/tNNN/fF, OUT/final/METHOD/fF/sS, OUT/results (the table's
runs), OUT/tune.json (every trial's score). See docs/tune.md.

Examples:
   dmlbench tune docs/examples/omniglot-tune.yaml --out runs/tune --parallel 2
   dmlbench tune status docs/examples/omniglot-tune.yaml --out runs/tune
   dmlbench report runs/tune --format markdown
   dmlbench plot tune runs/tune --out tune.png`,
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
	timeout := suite.DefaultClaimTimeout
	if plan.Spec.Slurm != nil && plan.Spec.Slurm.ClaimTimeout != "" {
		timeout = (&suite.Spec{Slurm: plan.Spec.Slurm}).ClaimTimeout()
	}
	claims := &suite.Claimer{Timeout: timeout, JobAlive: (&suite.Slurm{}).JobAlive}
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
	r.Overall = &suite.Overall{Total: plan.TotalCells(), Done: tuneDoneCells(plan), Begin: time.Now()}
	plans := append([]*tune.Plan{plan}, plan.Repeats()...)
	var retry tune.Retry
	for round := 1; ; round++ {
		jobs, labels, stage, err := tuneRound(plans)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			break
		}
		if c.Bool("dry-run") {
			for i, j := range jobs {
				fmt.Fprintf(c.App.Writer, "%4s %s\n     %s\n", labels[i], j.Name, suite.CommandLine(bin, j))
			}
			fmt.Fprintf(c.App.Writer, "%d %s cells can run now, output in %s\n", len(jobs), stage, plan.Out)
			return nil
		}
		if !quiet {
			fmt.Fprintf(c.App.ErrWriter, "tune: round %d (%s): %d cells; %d of %d cells done\n", round, stage, len(jobs), r.Overall.Done, r.Overall.Total)
		}
		res, err := r.Run(ctx, jobs)
		if ctx.Err() != nil {
			return err
		}
		if res != nil && len(res.Busy) > 0 {
			return fmt.Errorf("tune: %d cells are run by another process; run tune again once they finish (dmlbench tune status)", len(res.Busy))
		}
		if err != nil && !tuneOnlyTrialFailures(plan, res) && (res == nil || !retry.Again(res.Done, res.Failed)) {
			return err
		}
	}
	if err := plan.Finish(ctx, Version); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(c.App.ErrWriter, "tune: done; results in %s\nnext: dmlbench report %s --format markdown\n", plan.Out, plan.Out)
	}
	return nil
}

// tuneRound writes the cells that can run now in every plan (the main
// search, then its search repeats) and returns them as jobs named
// relative to the main output directory, with their labels (cell numbers;
// rN:i for repeat N) and the stages.
func tuneRound(plans []*tune.Plan) (jobs []suite.Job, labels []string, stage string, err error) {
	var stages []string
	for k, p := range plans {
		var cells []int
		var st string
		if k == 0 {
			cells, st, err = tuneNext(p)
		} else {
			cells, st, err = p.Next()
		}
		if err != nil {
			return nil, nil, "", err
		}
		if len(cells) == 0 {
			continue
		}
		prefix, label := "", "%d"
		if k > 0 {
			prefix, _ = filepath.Rel(plans[0].Out, p.Out)
			label, st = fmt.Sprintf("r%d:%%d", k), fmt.Sprintf("search repeat %d", k)
		}
		stages = append(stages, st+" stage")
		for i, j := range tuneJobs(p, cells) {
			j.Name = filepath.Join(prefix, j.Name)
			jobs = append(jobs, j)
			labels = append(labels, fmt.Sprintf(label, cells[i]))
		}
	}
	return jobs, labels, strings.Join(stages, ", "), nil
}

// tuneDoneCells counts the finished cells of the plan and its search
// repeats.
func tuneDoneCells(plan *tune.Plan) int {
	n := 0
	for _, p := range append([]*tune.Plan{plan}, plan.Repeats()...) {
		for _, j := range p.Jobs() {
			if suite.IsDone(j.Dir) {
				n++
			} else if _, err := os.Stat(filepath.Join(j.Dir, tune.FailedFile)); err == nil {
				n++
			}
		}
	}
	return n
}

// tuneOnlyTrialFailures reports whether every failed cell of res is a
// tuning cell whose configuration failed to train (a finished trial with
// the worst score, not an error of the run).
func tuneOnlyTrialFailures(plan *tune.Plan, res *suite.Result) bool {
	if res == nil {
		return false
	}
	for _, name := range res.Failed {
		if _, err := os.Stat(filepath.Join(plan.Out, name, tune.FailedFile)); err != nil {
			return false
		}
	}
	return true
}

func tuneJobs(plan *tune.Plan, cells []int) []suite.Job {
	jobs := make([]suite.Job, len(cells))
	for i, n := range cells {
		jobs[i], _ = plan.Job(n)
	}
	return jobs
}

// tuneNext writes the cells that can run now (plan.Next) and tune.json
// with every trial's score so far.
func tuneNext(plan *tune.Plan) ([]int, string, error) {
	cells, stage, err := plan.Next()
	if err != nil {
		return nil, "", err
	}
	sum, err := plan.Summarize()
	if err != nil {
		return nil, "", err
	}
	return cells, stage, record.WriteAtomic(filepath.Join(plan.Out, tune.SummaryFile), sum)
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
	if err != nil && tuneOnlyTrialFailures(plan, res) {
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
	if change.Restart {
		_, err := fmt.Fprintf(c.App.Writer, "%s: the spec changed, but no cell has produced anything yet: dmlbench tune starts the directory over\n", plan.Out)
		return err
	}
	sum, err := plan.Summarize()
	if err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%s: %s search, budget %d trials per method, %d folds, objective %s (validation classes)\n",
		plan.Out, plan.Spec.Search, plan.Spec.Budget, plan.Spec.Folds, plan.Spec.Objective)
	for _, m := range sum.Methods {
		done := 0
		for _, t := range m.Trials {
			if t.Done {
				done++
			}
		}
		best := "no trial finished"
		switch {
		case m.Best >= 0:
			best = fmt.Sprintf("best %s %s (trial t%03d: %s)", plan.Spec.Objective, reports.FormatMetricUnit(plan.Spec.Objective, float64(m.BestScore)), m.Best, tune.FormatParams(m.BestParams))
		case done == plan.Spec.Budget:
			best = "no trial trained successfully: no final row for this method"
		}
		fmt.Fprintf(w, "  %-20s %d/%d trials done; %s\n", m.Name, done, plan.Spec.Budget, best)
		if len(m.RepeatRanks) > 1 {
			fmt.Fprintf(w, "  %-20s rank in each of %d search repeats: %v\n", "", len(m.RepeatRanks), m.RepeatRanks)
		}
	}
	sl := &suite.Slurm{}
	jobs := plan.Jobs()
	cells := suite.Status(c.Context, plan.Out, jobs, suite.StatusOptions{Slurm: sl, Claims: &suite.Claimer{JobAlive: sl.JobAlive}})
	var shown []suite.CellStatus
	for _, cs := range cells {
		if cs.State == suite.StateRunning || cs.State == suite.StateFailed {
			if cs.State == suite.StateFailed {
				if _, err := os.Stat(filepath.Join(jobs[cs.Index].Dir, tune.FailedFile)); err == nil {
					cs.Detail = "configuration failed to train: the trial counts as the worst"
				}
			}
			shown = append(shown, cs)
		}
	}
	for _, cs := range shown {
		fmt.Fprintf(w, "%4d  %-7s  %s  %s\n", cs.Index, cs.State, cs.Name, cs.Detail)
		if cs.State == suite.StateFailed && cs.ErrLine != "" {
			fmt.Fprintf(w, "      log %s: %s\n", cs.Log, cs.ErrLine)
		}
	}
	maxPar := 0
	if plan.Spec.Slurm != nil {
		maxPar = plan.Spec.Slurm.MaxParallel
	}
	state := "in progress"
	if done, _ := plan.Finished(); done {
		state = "finished: dmlbench report " + plan.Out
	} else if change.Extended {
		state = "the spec extends the directory (" + strings.Join(change.Keys, ", ") + "): dmlbench tune runs the added work"
	}
	_, err = fmt.Fprintf(w, "%s; %s\n", suite.Summary(cells, maxPar), state)
	return err
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
	bin, specFile, out := abs(bin), abs(plan.Spec.File), abs(plan.Out)
	if plan.Spec.SearchRepeats > 1 {
		return usagef("tune --executor slurm: search-repeats runs with --executor local only")
	}
	sl := &suite.Slurm{}
	if !c.Bool("dry-run") && !sl.Available() {
		return errors.New("tune --executor slurm: sbatch not found on PATH (run this on a Slurm login node; --dry-run only writes the scripts)")
	}
	cells, stage, err := tuneNext(plan)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		if err := plan.Finish(c.Context, Version); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "tune: done; results in %s\n", plan.Out)
		return nil
	}
	queued := map[int]suite.QueueEntry{}
	if q, ok := sl.Queue(c.Context); ok {
		queued = suite.QueuedCells(q, suite.RecordedJobs(out))
	}
	var todo []int
	for _, n := range cells {
		dir, _ := plan.CellDir(n)
		if _, live := claims.Live(dir); live || queued[n].ID != "" {
			continue
		}
		todo = append(todo, n)
	}
	if err := os.MkdirAll(filepath.Join(suite.SlurmDir(out), "logs"), 0o755); err != nil {
		return err
	}
	if len(todo) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "tune: the %d %s cells that can run now are all queued or running; nothing to submit\n", len(cells), stage)
		return nil
	}
	array := filepath.Join(suite.SlurmDir(out), "tune-cells.sbatch")
	if err := atomicfile.WriteFileMode(array, 0o755, func(w io.Writer) error {
		_, err := io.WriteString(w, tune.ArrayScript(plan.Spec.Slurm, bin, specFile, out, todo))
		return err
	}); err != nil {
		return err
	}
	if c.Bool("dry-run") {
		fmt.Fprintf(c.App.ErrWriter, "tune: %d %s cells to submit; wrote %s (not submitted)\n", len(todo), stage, array)
		return nil
	}
	id, err := sl.Submit(c.Context, array)
	if err != nil {
		return err
	}
	if err := suite.RecordJob(out, id, todo); err != nil {
		return err
	}
	next := filepath.Join(suite.SlurmDir(out), "tune-next.sbatch")
	if err := atomicfile.WriteFileMode(next, 0o755, func(w io.Writer) error {
		_, err := io.WriteString(w, tune.NextScript(plan.Spec.Slurm, bin, specFile, out, id))
		return err
	}); err != nil {
		return err
	}
	nid, err := sl.Submit(c.Context, next)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "tune: submitted job %s: %d %s cells; follow-up job %s proposes the next batch when it ends\nnext: dmlbench tune status %s --out %s\n",
		id, len(todo), stage, nid, specFile, out)
	fmt.Fprintln(c.App.Writer, id)
	return nil
}
