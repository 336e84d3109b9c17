package tune

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// Produced reports whether any cell of the output directory has produced
// something a changed spec would invalidate, or may be running: a
// finished or failed trial, an epoch in run.json, a checkpoint, a
// command's embeddings or own files, a claim, a run.json that says
// running. A directory that only `tune --dry-run` wrote, or whose every
// cell failed before training (a command not found, a wrong interpreter),
// has produced nothing: its spec may still change (Restart).
func (p *Plan) Produced() (bool, error) {
	found := errors.New("found")
	err := filepath.WalkDir(p.Out, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch parent := filepath.Base(filepath.Dir(path)); {
		case d.Name() == FailedFile, d.Name() == trainers.CheckpointFile, d.Name() == cell.DoneFile, d.Name() == suite.ClaimFile:
			return found
		case parent == cell.EmbDir || parent == cell.TrainerDir:
			return found
		case d.Name() == trainers.RunFile:
			r, err := record.Read(path)
			if err == nil && (r.Status == "done" || r.Status == "running" || len(r.History) > 0) {
				return found
			}
		}
		return nil
	})
	if errors.Is(err, found) {
		return true, nil
	}
	return false, err
}

// Restart removes what the output directory holds of an earlier spec
// that produced nothing (Produced is false): its proposed cells, their
// logs, tune.json and the search repeats. The spec then runs from
// scratch.
func (p *Plan) Restart() error {
	for _, name := range []string{"trials", "final", "repeats", "results", SummaryFile} {
		if err := os.RemoveAll(filepath.Join(p.Out, name)); err != nil {
			return err
		}
	}
	return nil
}

// Retry decides whether `tune` goes on after a round in which cells failed
// (beyond trials that failed, which are results). It does once a cell has
// finished in this invocation, so that one method whose cells keep
// failing holds back no other: its command gives up after
// cell.MaxFailures starts in a row, and the method's row is missing with
// a note. Until a cell has finished, a round of failures stops the run:
// the environment (a wrong interpreter, a missing package) is more likely
// at fault than the cells, and every trial is kept for the rerun. A cell
// that fails more than cell.MaxFailures times in one run (a failure that
// is not its command's: a lock, a full disk) stops it too.
type Retry struct {
	succeeded bool
	failures  map[string]int
}

// Again records a round (the cells done and failed, by name) and reports
// whether to run another.
func (r *Retry) Again(done, failed []string) bool {
	if len(done) > 0 {
		r.succeeded = true
	}
	if !r.succeeded {
		return false
	}
	if r.failures == nil {
		r.failures = map[string]int{}
	}
	for _, name := range failed {
		r.failures[name]++
		if r.failures[name] > cell.MaxFailures {
			return false
		}
	}
	return true
}
