package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// With a validation split each evaluated epoch prints its validation
// metric and the best epoch so far; the end names the best epoch.
// Without one, the test R@1 of each evaluated epoch.
func TestRunReporterLines(t *testing.T) {
	var b bytes.Buffer
	r := newRunReporter(false, &b, false)
	r.progress(trainers.Progress{Epoch: 1, Epochs: 2, Iter: 3, Iters: 3, Loss: 0.5, Phase: "train"})
	run := &record.Run{SelectBy: "R@1", BestEpoch: 1,
		Initial: record.Metrics{"R@1": 0.25}, Final: record.Metrics{"R@1": 0.5},
		Best: record.Metrics{"R@1": 0.375}, BestVal: record.Metrics{"R@1": 0.625},
		History: []record.Epoch{{Epoch: 1, Metrics: record.Metrics{"R@1": 0.375}, ValMetric: record.Metrics{"R@1": 0.625}}}}
	r.epoch(run)
	r.done(run, "runs/x/run.json")
	want := "epoch 1/2 val R@1 62.50% (best: epoch 1)\n" +
		"best epoch 1 by val R@1 62.50% (its test R@1 37.50%)\n" +
		"initial R@1 25.00% → final R@1 50.00%; wrote runs/x/run.json\n"
	if got := b.String(); !strings.HasPrefix(got, "epoch 1/2 loss 0.50000") || !strings.HasSuffix(got, want) {
		t.Errorf("got\n%s\nwant the end\n%s", got, want)
	}
	b.Reset()
	run.History[0].ValMetric, run.SelectBy, run.BestEpoch = nil, "", 0
	r.epoch(run)
	if b.String() != "epoch 1/2 test R@1 37.50%\n" {
		t.Errorf("without validation: %q", b.String())
	}
	b.Reset()
	q := newRunReporter(true, &b, false)
	q.progress(trainers.Progress{Epoch: 1, Epochs: 2, Iter: 3, Iters: 3, Phase: "train"})
	q.epoch(run)
	q.done(run, "x")
	if b.Len() != 0 {
		t.Errorf("quiet printed %q", b.String())
	}
}
