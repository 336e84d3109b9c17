package suite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
)

// Submitter submits cells of an output directory to Slurm as job arrays,
// for suite and tune alike: it leaves out the cells that are done, run
// (a live claim) or queued (a job of OUT/slurm/jobs.txt in squeue), writes
// the batch scripts under OUT/slurm and records each array's job id.
type Submitter struct {
	Out    string // absolute output directory
	Slurm  *Slurm
	Claims *Claimer
	// DryRun writes the scripts and submits nothing.
	DryRun bool
}

// Pending is what Select found among the candidate cells.
type Pending struct {
	Todo                  []int // cells to submit
	Done, Running, Queued int
}

// CheckSbatch is an error naming command when sbatch is missing (not
// with DryRun, which submits nothing). scripts says what a dry run
// writes ("script", "scripts").
func (s *Submitter) CheckSbatch(command, scripts string) error {
	if !s.DryRun && !s.Slurm.Available() {
		return fmt.Errorf("%s --executor slurm: sbatch not found on PATH (run this on a Slurm login node; --dry-run only writes the %s)", command, scripts)
	}
	return nil
}

// Select sorts the cells (numbers, with their run directories dir(n))
// into done, running, queued and to submit, and makes OUT/slurm/logs,
// where the tasks write their logs.
func (s *Submitter) Select(ctx context.Context, cells []int, dir func(n int) string) (Pending, error) {
	queued := map[int]QueueEntry{}
	if q, ok := s.Slurm.Queue(ctx); ok {
		queued = QueuedCells(q, RecordedJobs(s.Out))
	}
	var p Pending
	for _, n := range cells {
		d := dir(n)
		switch _, live := s.Claims.Live(d); {
		case IsDone(d):
			p.Done++
		case live:
			p.Running++
		case queued[n].ID != "":
			p.Queued++
		default:
			p.Todo = append(p.Todo, n)
		}
	}
	return p, os.MkdirAll(filepath.Join(SlurmDir(s.Out), "logs"), 0o755)
}

// WriteScript writes the batch script OUT/slurm/name (executable) and
// returns its path.
func (s *Submitter) WriteScript(name, script string) (string, error) {
	path := filepath.Join(SlurmDir(s.Out), name)
	return path, atomicfile.WriteFileMode(path, 0o755, func(w io.Writer) error {
		_, err := io.WriteString(w, script)
		return err
	})
}

// Submit submits the script at path and, when cells are given (a job
// array over them), records its job id in OUT/slurm/jobs.txt.
func (s *Submitter) Submit(ctx context.Context, path string, cells []int) (string, error) {
	id, err := s.Slurm.Submit(ctx, path)
	if err != nil {
		return "", err
	}
	if len(cells) > 0 {
		if err := RecordJob(s.Out, id, cells); err != nil {
			return "", err
		}
	}
	return id, nil
}

// SubmitSuite writes OUT/slurm/suite.sbatch, a job array over the cells
// of jobs that no one has done, runs or queued, and submits it (not with
// DryRun). file is the suite file and bin the binary the tasks run, both
// absolute. It says what it did on log and prints the job id on stdout.
func (s *Submitter) SubmitSuite(ctx context.Context, spec *Spec, file, bin string, jobs []Job, log, stdout io.Writer) error {
	if err := s.CheckSbatch("suite", "script"); err != nil {
		return err
	}
	all := make([]int, len(jobs))
	for i := range all {
		all[i] = i
	}
	p, err := s.Select(ctx, all, func(n int) string { return jobs[n].Dir })
	if err != nil {
		return err
	}
	if err := WriteManifest(s.Out, file, jobs); err != nil {
		return err
	}
	state := fmt.Sprintf("%d cells: %d done, %d running, %d queued", len(jobs), p.Done, p.Running, p.Queued)
	if len(p.Todo) == 0 {
		fmt.Fprintf(log, "suite: %s; nothing to submit\n", state)
		return nil
	}
	script, err := s.WriteScript("suite.sbatch", spec.Script(bin, file, s.Out, p.Todo))
	if err != nil {
		return err
	}
	maxPar := spec.Slurm.Parallel()
	array := ArraySpec(p.Todo, maxPar)
	if s.DryRun {
		fmt.Fprintf(log, "suite: %s, %d to submit (--array=%s); wrote %s (not submitted)\n", state, len(p.Todo), array, script)
		return nil
	}
	id, err := s.Submit(ctx, script, p.Todo)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "suite: %s; submitted job %s: %d cells (--array=%s), logs in %s\n",
		state, id, len(p.Todo), array, filepath.Join(SlurmDir(s.Out), "logs"))
	fmt.Fprintf(log, "next: dmlbench suite status %s --out %s\n", file, s.Out)
	fmt.Fprintln(stdout, id)
	return nil
}
