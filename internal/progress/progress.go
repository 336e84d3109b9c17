package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/internal/record"
)

// Stages returns eval's progress callback and the function that ends its
// display on w. On a terminal (and not quiet) a stage that reports its
// progress (the k-NN search) gets a progress bar once it has run for more
// than ~1.5 s, so quick runs print nothing; between such stages (k-means
// and the other metrics, which do not report progress) a spinner with the
// elapsed time shows that work goes on. Both are cleared when done.
func Stages(w *os.File, quiet bool) (func(stage string, done, total int), func()) {
	if quiet || !term.IsTerminal(int(w.Fd())) {
		return nil, func() {}
	}
	p := &stages{w: w, idleSince: time.Now(), stop: make(chan struct{})}
	go p.tick()
	var once sync.Once
	return p.report, func() {
		once.Do(func() {
			close(p.stop)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.finish()
		})
	}
}

// progressDelay is how long a stage runs before it gets a bar or spinner.
const progressDelay = 1500 * time.Millisecond

// stages is the display state of Stages.
type stages struct {
	w         io.Writer
	mu        sync.Mutex
	cur       string    // stage of the bar, "" when none runs
	start     time.Time // start of cur
	bar       *progressbar.ProgressBar
	idleSince time.Time // when the last reporting stage ended
	seen      []string  // stages that reported, for the spinner's text
	spinner   *progressbar.ProgressBar
	stop      chan struct{}
}

// finish clears the bar or spinner on screen (p.mu held).
func (p *stages) finish() {
	for _, b := range []*progressbar.ProgressBar{p.bar, p.spinner} {
		if b != nil {
			_ = b.Finish()
		}
	}
	p.bar, p.spinner = nil, nil
}

// report receives a stage's progress (done of total).
func (p *stages) report(stage string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stage != p.cur {
		p.finish()
		p.cur, p.start = stage, time.Now()
		p.seen = append(p.seen, stage)
	}
	if done >= total {
		p.finish()
		p.cur, p.idleSince = "", time.Now()
		return
	}
	if p.bar == nil {
		if time.Since(p.start) < progressDelay {
			return
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(stage),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
	}
	_ = p.bar.Set(done)
}

// tick animates the spinner while no reporting stage runs.
func (p *stages) tick() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		if p.cur == "" && time.Since(p.idleSince) >= progressDelay {
			if p.spinner == nil {
				what := "evaluating"
				if len(p.seen) > 0 {
					what = "evaluating (k-means, other metrics)"
				}
				p.spinner = progressbar.NewOptions(-1,
					progressbar.OptionSetWriter(p.w),
					progressbar.OptionSetDescription(what),
					progressbar.OptionSpinnerType(14),
					progressbar.OptionSetElapsedTime(true),
					progressbar.OptionClearOnFinish())
			}
			_ = p.spinner.Add(1)
		}
		p.mu.Unlock()
	}
}

// Training shows a training run's progress on w: a progress bar
// (terminal) or one line per epoch (otherwise); after each evaluated epoch
// its validation metric (with --val-split) or test R@1 (with --eval-every
// alone); at the end the best epoch and the final metrics. Quiet: nothing.
// Metrics are shown by Format (eval's unit rule: percent for fractions).
type Training struct {
	// Format shows metric key's value v.
	Format func(key string, v float64) string
	w      io.Writer
	quiet  bool
	tty    bool
	start  time.Time
	bar    *progressbar.ProgressBar // made at the first step, which knows the steps per epoch
	// last is R@1 of the latest evaluated epoch, for the bar; epochs the
	// run's number of epochs (from the progress reports).
	last   string
	epochs int
}

// NewTraining returns the display of a run on w (a terminal: tty), or
// of nothing when quiet; format shows a metric's value.
func NewTraining(quiet bool, w io.Writer, tty bool, format func(key string, v float64) string) *Training {
	return &Training{Format: format, w: w, quiet: quiet, tty: tty, start: time.Now(), last: "–"}
}

// Step is a trainer's progress report: a step of an epoch, or an
// evaluation.
type Step struct {
	Epoch, Epochs int // Epoch is 1-based
	Iter, Iters   int // steps done in this epoch
	Loss          float64
	Phase         string // "train", "eval"
}

// pct shows metric key of m by Format, "–" when absent.
func (r *Training) pct(m map[string]float64, key string) string {
	v, ok := m[key]
	if !ok {
		return "–"
	}
	return r.Format(key, v)
}

// Progress receives the trainer's step and evaluation reports.
func (r *Training) Progress(p Step) {
	r.epochs = p.Epochs
	if r.quiet {
		return
	}
	if !r.tty {
		if p.Phase == "train" && p.Iter == p.Iters {
			fmt.Fprintf(r.w, "epoch %d/%d loss %.5f (%.1f s)\n", p.Epoch, p.Epochs, p.Loss, time.Since(r.start).Seconds())
		}
		if p.Phase == "eval" && p.Epoch == 0 {
			fmt.Fprintln(r.w, "evaluating the untrained model")
		}
		return
	}
	switch p.Phase {
	case "train":
		if r.bar == nil {
			r.bar = progressbar.NewOptions(p.Epochs*p.Iters,
				progressbar.OptionSetWriter(r.w),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetDescription("training"))
		}
		r.bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f R@1 %s", p.Epoch, p.Epochs, p.Loss, r.last))
		_ = r.bar.Set((p.Epoch-1)*p.Iters + p.Iter)
	case "eval":
		if r.bar != nil {
			r.bar.Describe(fmt.Sprintf("epoch %d/%d evaluating… R@1 %s", p.Epoch, p.Epochs, r.last))
		}
	}
}

// Epoch receives the run record after each epoch: an evaluated epoch gets
// a line with its validation metric (the select-by metric and R@1) or,
// without a validation split, its test R@1, and the best epoch so far.
func (r *Training) Epoch(run *record.Run) {
	if len(run.History) == 0 {
		return
	}
	row := run.History[len(run.History)-1]
	if len(row.Metrics) == 0 {
		return
	}
	r.last = r.pct(row.Metrics, "R@1")
	if r.quiet {
		return
	}
	line := fmt.Sprintf("epoch %d/%d test R@1 %s", row.Epoch, r.epochs, r.last)
	if len(row.ValMetric) > 0 {
		sel := run.SelectBy
		line = fmt.Sprintf("epoch %d/%d val %s %s", row.Epoch, r.epochs, sel, r.pct(row.ValMetric, sel))
		if sel != "R@1" {
			line += " R@1 " + r.pct(row.ValMetric, "R@1")
		}
		line += fmt.Sprintf(" (best: epoch %d)", run.BestEpoch)
	}
	if r.bar != nil {
		_ = r.bar.Clear()
	}
	fmt.Fprintln(r.w, line)
}

// Done prints the end of a finished run: the best epoch (with a
// validation split), the initial and final test R@1, the record's path.
func (r *Training) Done(run *record.Run, path string) {
	if r.quiet {
		return
	}
	if r.bar != nil {
		_ = r.bar.Finish()
		fmt.Fprintln(r.w)
	}
	if run.BestEpoch > 0 && run.SelectBy != "" {
		fmt.Fprintf(r.w, "best epoch %d by val %s %s (its test R@1 %s)\n", run.BestEpoch, run.SelectBy, r.pct(run.BestVal, run.SelectBy), r.pct(run.Best, "R@1"))
	}
	fmt.Fprintf(r.w, "initial R@1 %s → final R@1 %s; wrote %s\n", r.pct(run.Initial, "R@1"), r.pct(run.Final, "R@1"), path)
}
