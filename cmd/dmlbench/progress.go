package main

import (
	"io"
	"os"

	"github.com/dmlbench/dmlbench/internal/progress"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/trainers"
)

// stageProgress is eval's progress display on stderr (progress.Stages).
func stageProgress(quiet bool) (func(stage string, done, total int), func()) {
	return progress.Stages(os.Stderr, quiet)
}

// runReporter shows a training run's progress (progress.Training), its
// metrics under eval's unit rule.
type runReporter struct{ t *progress.Training }

func newRunReporter(quiet bool, w io.Writer, tty bool) *runReporter {
	return &runReporter{progress.NewTraining(quiet, w, tty, reports.FormatMetricUnit)}
}

func (r *runReporter) progress(p trainers.Progress) {
	if onRunStep != nil {
		onRunStep(p)
	}
	r.t.Progress(progress.Step{Epoch: p.Epoch, Epochs: p.Epochs, Iter: p.Iter, Iters: p.Iters, Loss: p.Loss, Phase: p.Phase})
}

func (r *runReporter) epoch(run *record.Run)             { r.t.Epoch(run) }
func (r *runReporter) done(run *record.Run, path string) { r.t.Done(run, path) }
