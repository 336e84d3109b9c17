package tune

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/internal/record"
)

// LocalOptions are the settings of RunLocal.
type LocalOptions struct {
	// DryRun writes the cells that can run now, lists them on Stdout and
	// runs nothing.
	DryRun bool
	// Quiet leaves out the per-round lines on Log.
	Quiet       bool
	Stdout, Log io.Writer
	Version     string // recorded in the results
}

// RunLocal runs the cells of the plan and of its search repeats round
// after round on this machine with r (whose Bin the cells execute) until
// none is left, then writes the results (Finish). A round's failed cells
// stop it unless each is a trial whose configuration failed to train.
func (p *Plan) RunLocal(ctx context.Context, r *suite.Runner, opt LocalOptions) error {
	r.Overall = &suite.Overall{Total: p.TotalCells(), Done: p.DoneCells(), Begin: time.Now()}
	plans := append([]*Plan{p}, p.Repeats()...)
	var retry Retry
	for round := 1; ; round++ {
		jobs, labels, stage, err := Round(plans)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			break
		}
		if opt.DryRun {
			for i, j := range jobs {
				fmt.Fprintf(opt.Stdout, "%4s %s\n     %s\n", labels[i], j.Name, suite.CommandLine(r.Bin, j))
			}
			fmt.Fprintf(opt.Stdout, "%d %s cells can run now, output in %s\n", len(jobs), stage, p.Out)
			return nil
		}
		if !opt.Quiet {
			fmt.Fprintf(opt.Log, "tune: round %d (%s): %d cells; %d of %d cells done\n", round, stage, len(jobs), r.Overall.Done, r.Overall.Total)
		}
		res, err := r.Run(ctx, jobs)
		if ctx.Err() != nil {
			return err
		}
		if res != nil && len(res.Busy) > 0 {
			return fmt.Errorf("tune: %d cells are run by another process; run tune again once they finish (dmlbench tune status)", len(res.Busy))
		}
		if err != nil && !p.OnlyTrialFailures(res) && (res == nil || !retry.Again(res.Done, res.Failed)) {
			return err
		}
	}
	if err := p.Finish(ctx, opt.Version); err != nil {
		return err
	}
	if !opt.Quiet {
		fmt.Fprintf(opt.Log, "tune: done; results in %s\nnext: dmlbench report %s --format markdown\n", p.Out, p.Out)
	}
	return nil
}

// Round writes the cells that can run now in every plan (the main
// search, then its search repeats) and returns them as jobs named
// relative to the main output directory, with their labels (cell numbers;
// rN:i for repeat N) and the stages.
func Round(plans []*Plan) (jobs []suite.Job, labels []string, stage string, err error) {
	var stages []string
	for k, p := range plans {
		var cells []int
		var st string
		if k == 0 {
			cells, st, err = p.NextSummarized()
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
		for i, n := range cells {
			j, _ := p.Job(n)
			j.Name = filepath.Join(prefix, j.Name)
			jobs = append(jobs, j)
			labels = append(labels, fmt.Sprintf(label, cells[i]))
		}
	}
	return jobs, labels, strings.Join(stages, ", "), nil
}

// DoneCells counts the finished cells of the plan and its search
// repeats.
func (p *Plan) DoneCells() int {
	n := 0
	for _, q := range append([]*Plan{p}, p.Repeats()...) {
		for _, j := range q.Jobs() {
			if suite.IsDone(j.Dir) {
				n++
			} else if _, err := os.Stat(filepath.Join(j.Dir, FailedFile)); err == nil {
				n++
			}
		}
	}
	return n
}

// OnlyTrialFailures reports whether every failed cell of res is a
// tuning cell whose configuration failed to train (a finished trial with
// the worst score, not an error of the run).
func (p *Plan) OnlyTrialFailures(res *suite.Result) bool {
	if res == nil {
		return false
	}
	for _, name := range res.Failed {
		if _, err := os.Stat(filepath.Join(p.Out, name, FailedFile)); err != nil {
			return false
		}
	}
	return true
}

// NextSummarized writes the cells that can run now (Next) and tune.json
// with every trial's score so far.
func (p *Plan) NextSummarized() ([]int, string, error) {
	cells, stage, err := p.Next()
	if err != nil {
		return nil, "", err
	}
	sum, err := p.Summarize()
	if err != nil {
		return nil, "", err
	}
	return cells, stage, record.WriteAtomic(filepath.Join(p.Out, SummaryFile), sum)
}

// SubmitSlurm submits the cells that can run now as a job array and a
// follow-up job (afterany) that runs tune again to propose and submit the
// next batch, or to finish; with nothing left to run it finishes here.
// bin and specFile are absolute, as is sub.Out (the plan's directory).
// It says what it did on log and prints the array's job id on stdout.
func (p *Plan) SubmitSlurm(ctx context.Context, sub *suite.Submitter, bin, specFile, version string, log, stdout io.Writer) error {
	if err := sub.CheckSbatch("tune", "scripts"); err != nil {
		return err
	}
	cells, stage, err := p.NextSummarized()
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		if err := p.Finish(ctx, version); err != nil {
			return err
		}
		fmt.Fprintf(log, "tune: done; results in %s\n", p.Out)
		return nil
	}
	pend, err := sub.Select(ctx, cells, func(n int) string { d, _ := p.CellDir(n); return d })
	if err != nil {
		return err
	}
	todo, out := pend.Todo, sub.Out
	if len(todo) == 0 {
		fmt.Fprintf(log, "tune: the %d %s cells that can run now are all queued or running; nothing to submit\n", len(cells), stage)
		return nil
	}
	array, err := sub.WriteScript("tune-cells.sbatch", ArrayScript(p.Spec.Slurm, bin, specFile, out, todo))
	if err != nil {
		return err
	}
	if sub.DryRun {
		fmt.Fprintf(log, "tune: %d %s cells to submit; wrote %s (not submitted)\n", len(todo), stage, array)
		return nil
	}
	id, err := sub.Submit(ctx, array, todo)
	if err != nil {
		return err
	}
	next, err := sub.WriteScript("tune-next.sbatch", NextScript(p.Spec.Slurm, bin, specFile, out, id))
	if err != nil {
		return err
	}
	nid, err := sub.Submit(ctx, next, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "tune: submitted job %s: %d %s cells; follow-up job %s proposes the next batch when it ends\nnext: dmlbench tune status %s --out %s\n",
		id, len(todo), stage, nid, specFile, out)
	fmt.Fprintln(stdout, id)
	return nil
}
