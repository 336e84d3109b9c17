package tune

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/trainers"
)

// Invocation is one `dmlbench tune SPEC` run over a checked plan: where
// its cells run and what it prints.
type Invocation struct {
	Bin      string // the dmlbench binary the cells execute
	Executor string // local | slurm
	Parallel int    // cells at once (local)
	OneCell  bool   // run only cell Cell (a Slurm array task)
	Cell     int
	DryRun   bool
	Quiet    bool
	Version  string
	// Progress receives the progress bar (a terminal), or nil.
	Progress       io.Writer
	Stdout, Stderr io.Writer
}

// Execute runs inv over p, whose spec changed from the directory's as
// change says: one cell, the cells that can run now on Slurm, or every
// round here; a finished directory is left as it is. Interrupts cancel
// the cells.
func (p *Plan) Execute(ctx context.Context, change Change, inv Invocation) error {
	if inv.Parallel < 1 {
		return usage.Errorf("--parallel must be ≥ 1 (got %d)", inv.Parallel)
	}
	if inv.Executor != "local" && inv.Executor != "slurm" {
		return usage.Errorf("--executor must be local or slurm (got %q)", inv.Executor)
	}
	claims := &suite.Claimer{Timeout: (&suite.Spec{Slurm: p.Spec.Slurm}).ClaimTimeout(), JobAlive: (&suite.Slurm{}).JobAlive}
	if err := os.MkdirAll(p.Out, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if inv.OneCell {
		return p.runCell(ctx, inv, claims)
	}
	if change.Restart && !inv.DryRun {
		fmt.Fprintf(inv.Stderr, "tune: the spec changed, but no cell of %s had produced anything: starting it over\n", p.Out)
		if err := p.Restart(); err != nil {
			return err
		}
	}
	if done, err := p.Finished(); err != nil || done {
		if done {
			fmt.Fprintf(inv.Stderr, "tune: %s is finished; nothing to do (dmlbench report %s)\n", p.Out, p.Out)
		}
		return err
	}
	if change.Extended {
		fmt.Fprintf(inv.Stderr, "tune: the spec extends %s (%s): running the added work\n", p.Out, strings.Join(change.Keys, ", "))
	}
	if inv.Executor == "slurm" {
		return p.submit(ctx, inv, claims)
	}
	r := inv.runner(inv.Parallel, claims)
	if inv.Quiet {
		r.Log = nil
	} else {
		r.Progress = inv.Progress
	}
	return p.RunLocal(ctx, r, LocalOptions{DryRun: inv.DryRun, Quiet: inv.Quiet, Stdout: inv.Stdout, Log: inv.Stderr, Version: inv.Version})
}

// runner runs jobs cells at once, each claimed, resumed from the
// trainer's checkpoint when its directory holds one.
func (inv Invocation) runner(jobs int, claims *suite.Claimer) *suite.Runner {
	return &suite.Runner{Name: "tune", Bin: inv.Bin, Jobs: jobs, Log: inv.Stderr, Version: inv.Version,
		ResumeFile: trainers.CheckpointFile, ResumeFlag: "--resume", Claims: claims}
}

// runCell runs cell inv.Cell (a Slurm array task): claimed, resumed from
// its checkpoint, GOMAXPROCS from SLURM_CPUS_PER_TASK.
func (p *Plan) runCell(ctx context.Context, inv Invocation, claims *suite.Claimer) error {
	n := inv.Cell
	j, err := p.Job(n)
	if err != nil {
		return usage.Errorf("--cell: %v", err)
	}
	if _, err := os.Stat(filepath.Join(j.Dir, CellFile)); err != nil {
		return fmt.Errorf("tune: cell %d (%s) has not been proposed yet (run dmlbench tune %s first)", n, j.Name, p.Spec.File)
	}
	r := inv.runner(1, claims)
	r.Env = append(r.Env, suite.SlurmTaskEnv()...)
	fmt.Fprintf(inv.Stderr, "tune: cell %d: %s\n", n, j.Name)
	res, err := r.Run(ctx, []suite.Job{j})
	if err != nil && p.OnlyTrialFailures(res) {
		return nil
	}
	return err
}

// submit submits the cells that can run now as a job array and a
// follow-up job (afterany) that runs this command again to propose and
// submit the next batch, or to finish.
func (p *Plan) submit(ctx context.Context, inv Invocation, claims *suite.Claimer) error {
	abs := func(path string) string {
		if a, err := filepath.Abs(path); err == nil {
			return a
		}
		return path
	}
	if p.Spec.SearchRepeats > 1 {
		return usage.Errorf("tune --executor slurm: search-repeats runs with --executor local only")
	}
	sub := &suite.Submitter{Out: abs(p.Out), Slurm: &suite.Slurm{}, Claims: claims, DryRun: inv.DryRun}
	return p.SubmitSlurm(ctx, sub, abs(inv.Bin), abs(p.Spec.File), inv.Version, inv.Stderr, inv.Stdout)
}
