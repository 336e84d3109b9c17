package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/record"
)

// ExecFunc runs bin with args, streaming its output to stdout and stderr.
type ExecFunc func(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error

// Runner executes the jobs of a suite.
type Runner struct {
	// Bin is the dmlbench binary each job executes (os.Executable()).
	Bin string
	// Jobs is the number of runs in flight at once (≤ 1: sequential).
	Jobs int
	// Progress receives the progress bar (nil: none).
	Progress io.Writer
	// Log receives one line per finished, skipped or failed run (nil: none).
	Log io.Writer
	// FailFast stops starting new runs after the first failure.
	FailFast bool
	// Exec runs a command; nil uses os/exec, interrupting the child with
	// SIGINT (then killing it after 30 s) when ctx is cancelled.
	Exec ExecFunc
	// Version is written into run.json files the runner creates.
	Version string
	// ResumeFile, if set, names the trainer's checkpoint inside a run
	// directory: when it exists (an interrupted run), ResumeFlag is
	// appended so the trainer continues instead of refusing to overwrite.
	ResumeFile, ResumeFlag string
	// Env is added to each run's environment (e.g. GOMAXPROCS from
	// SLURM_CPUS_PER_TASK).
	Env []string
	// Claims guards each run directory with a claim file (see Claim), so
	// that concurrent suite invocations never run a cell twice; nil: no
	// claims.
	Claims *Claimer
	// Name is the command in the runner's messages: "suite" when empty,
	// "tune" for tune's cells.
	Name string
	// Overall, if set, makes the progress of the log lines count every
	// cell of a run that calls Run several times (tune's batches), so its
	// ETA does not restart with each call.
	Overall *Overall
}

// Overall is the progress of several calls of Run: Total cells, Done so
// far (those finished before Begin included).
type Overall struct {
	Total, Done int
	Begin       time.Time
	ran         int // finished since Begin
}

// progress is "[done/total, elapsed, ETA]": the ETA is the mean time per
// cell finished since begin times the cells left.
func progress(done, total, ran int, begin time.Time) string {
	el := time.Since(begin)
	eta := time.Duration(float64(el) / float64(max(ran, 1)) * float64(max(total-done, 0))).Round(time.Second)
	return fmt.Sprintf("[%d/%d, %s elapsed, ETA %s]", done, total, el.Round(time.Second), eta)
}

// Result lists what happened to each job by name.
type Result struct {
	Done, Skipped, Failed []string
	// Busy lists the runs another process was running (a live claim).
	Busy []string
	// Interrupted lists the runs stopped by the cancellation of Run's
	// context (Ctrl-C, SIGTERM): not failures; they keep their checkpoint
	// and the next invocation resumes them.
	Interrupted []string
	// Errors holds the failure of each failed job.
	Errors map[string]error
}

// ErrInterrupted is wrapped by the error of a run, and of Run, that the
// cancellation of the context stopped.
var ErrInterrupted = errors.New("interrupted")

// interruptedError is Run's error after a cancellation: its message says
// how to resume; it matches ErrInterrupted and the context's error
// (context.Canceled) with errors.Is.
type interruptedError struct {
	cause error
	msg   string
}

func (e *interruptedError) Error() string   { return e.msg }
func (e *interruptedError) Unwrap() []error { return []error{ErrInterrupted, e.cause} }

// name is the command the runner's messages name.
func (r *Runner) name() string {
	if r.Name == "" {
		return "suite"
	}
	return r.Name
}

// IsDone reports whether dir holds a run.json with status "done".
func IsDone(dir string) bool {
	r, err := record.Read(filepath.Join(dir, "run.json"))
	return err == nil && r.Status == "done"
}

// Run executes the jobs that are not done yet. A job's stdout and stderr
// go to DIR/log.txt (eval jobs keep stdout, the JSON result, in memory).
// Finished runs are skipped, so re-running a killed suite loses at most
// the runs that were in flight. It returns an error when any job failed.
func (r *Runner) Run(ctx context.Context, jobs []Job) (*Result, error) {
	if r.Bin == "" {
		return nil, fmt.Errorf("%s: no binary to run", r.name())
	}
	res := &Result{Errors: map[string]error{}}
	todo := r.pending(jobs, res)
	skippedBefore := len(res.Skipped)
	if len(todo) == 0 {
		return res, nil
	}
	t := &tally{r: r, res: res, todo: len(todo), bar: r.progressBar(len(todo)), begin: time.Now()}
	r.dispatch(ctx, todo, t)
	if err := ctx.Err(); err != nil {
		left := len(todo) - len(res.Done) - len(res.Failed) - len(res.Interrupted) - len(res.Busy) - (len(res.Skipped) - skippedBefore)
		return res, &interruptedError{cause: err, msg: fmt.Sprintf("%s %v: %d of %d runs done, %d interrupted (checkpoints kept), %d not started; rerun the same command to resume",
			r.name(), ErrInterrupted, len(res.Done), len(todo), len(res.Interrupted), left)}
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("%s: %d of %d runs failed (see log.txt in each run directory): %s", r.name(), len(res.Failed), len(todo), strings.Join(res.Failed, ", "))
	}
	return res, nil
}

// pending returns the jobs whose run directory is not done yet, listing
// the others in res.Skipped.
func (r *Runner) pending(jobs []Job, res *Result) []Job {
	var todo []Job
	for _, j := range jobs {
		if IsDone(j.Dir) {
			res.Skipped = append(res.Skipped, j.Name)
			continue
		}
		todo = append(todo, j)
	}
	if r.Log != nil && len(res.Skipped) > 0 {
		fmt.Fprintf(r.Log, "%s: %d of %d runs already done, skipped\n", r.name(), len(res.Skipped), len(jobs))
	}
	return todo
}

// progressBar is the bar over n runs on r.Progress (nil: none).
func (r *Runner) progressBar(n int) *progressbar.ProgressBar {
	if r.Progress == nil {
		return nil
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(r.Progress),
		progressbar.OptionSetDescription(r.name()),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(r.Progress) }),
	)
}

// dispatch runs todo on r.Jobs workers (at least one), handing out jobs in
// order until they run out, ctx is cancelled or a failure stops a
// fail-fast suite; it returns when every started job has finished.
func (r *Runner) dispatch(ctx context.Context, todo []Job, t *tally) {
	ch := make(chan Job)
	var wg sync.WaitGroup
	for range min(max(1, r.Jobs), len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if !t.start(ctx, j) {
					continue
				}
				t.finish(j, r.runJob(ctx, j))
			}
		}()
	}
	for _, j := range todo {
		if t.stopped() || ctx.Err() != nil {
			break
		}
		select {
		case ch <- j:
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
}

// tally collects the outcome of the jobs a Run's workers finish, under
// one lock: the Result lists, the progress bar and log, and the fail-fast
// stop.
type tally struct {
	r     *Runner
	res   *Result
	bar   *progressbar.ProgressBar
	begin time.Time
	todo  int // jobs Run set out to run

	mu   sync.Mutex
	stop bool // a failure stopped a fail-fast suite
}

func (t *tally) stopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stop
}

// start reports whether job j should run (no stop, ctx not cancelled) and
// names it on the bar.
func (t *tally) start(ctx context.Context, j Job) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stop || ctx.Err() != nil {
		return false
	}
	if t.bar != nil {
		t.bar.Describe(j.Name)
	}
	return true
}

// finish records job j's outcome err: busy (another process holds its
// claim) or skipped (done meanwhile), else failed or done with a log line
// giving the progress and ETA.
func (t *tally) finish(j Job, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar != nil {
		defer t.bar.Add(1)
	}
	res, log := t.res, t.r.Log
	var busy *ClaimedError
	if errors.Is(err, errAlreadyDone) || errors.As(err, &busy) {
		if busy != nil {
			res.Busy = append(res.Busy, j.Name)
			if log != nil {
				fmt.Fprintf(log, "busy %s: %v\n", j.Name, busy)
			}
		} else {
			res.Skipped = append(res.Skipped, j.Name)
		}
		return
	}
	interrupted := errors.Is(err, ErrInterrupted)
	switch {
	case interrupted:
		res.Interrupted = append(res.Interrupted, j.Name)
	case err != nil:
		res.Failed = append(res.Failed, j.Name)
		res.Errors[j.Name] = err
		if t.r.FailFast {
			t.stop = true
		}
	default:
		res.Done = append(res.Done, j.Name)
	}
	if log == nil {
		return
	}
	if t.bar != nil {
		t.bar.Clear()
	}
	if interrupted {
		fmt.Fprintf(log, "interrupted %s (its checkpoint is kept)\n", j.Name)
		return
	}
	n := len(res.Done) + len(res.Failed)
	prog := progress(n, t.todo, n, t.begin)
	if o := t.r.Overall; o != nil {
		o.Done++
		o.ran++
		prog = progress(o.Done, o.Total, o.ran, o.Begin)
	}
	if err != nil {
		fmt.Fprintf(log, "FAIL %s %s: %v\n", j.Name, prog, err)
	} else {
		fmt.Fprintf(log, "done %s %s\n", j.Name, prog)
	}
}

func (r *Runner) exec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if r.Exec != nil {
		return r.Exec(ctx, r.Bin, args, stdout, stderr)
	}
	cmd := exec.CommandContext(ctx, r.Bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if len(r.Env) > 0 {
		cmd.Env = append(os.Environ(), r.Env...)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	childAttr(cmd)
	// The parent-death signal is tied to the forking thread: keep it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}

// errAlreadyDone: another process finished the run after this one listed it.
var errAlreadyDone = errors.New("already done")

func (r *Runner) runJob(ctx context.Context, j Job) error {
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return err
	}
	if r.Claims != nil {
		cl, err := r.Claims.Acquire(j.Dir)
		if err != nil {
			return err
		}
		defer cl.Release()
		if IsDone(j.Dir) {
			return errAlreadyDone
		}
		// Under the claim no other suite process writes this directory:
		// temporary files there were left by killed writers.
		_, _ = atomicfile.CleanTemps(j.Dir, 0, "run.json")
	}
	logf, err := os.OpenFile(filepath.Join(j.Dir, "log.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# %s %s %s\n", time.Now().Format(time.RFC3339), r.Bin, shellJoin(j.Args))
	start := time.Now()
	switch j.Kind {
	case Eval:
		return r.runEval(ctx, j, logf, start)
	default:
		args := j.Args
		if r.ResumeFile != "" && r.ResumeFlag != "" {
			if _, err := os.Stat(filepath.Join(j.Dir, r.ResumeFile)); err == nil {
				args = append(append([]string(nil), args...), r.ResumeFlag)
				fmt.Fprintf(logf, "# resuming from %s\n", r.ResumeFile)
			}
		}
		var tail lastLine
		err := r.exec(ctx, args, logf, io.MultiWriter(logf, &tail))
		runPath := filepath.Join(j.Dir, "run.json")
		if err != nil && ctx.Err() != nil {
			// Stopped by Ctrl-C or SIGTERM: the run keeps its checkpoint
			// and records its own state; the next invocation resumes it.
			return fmt.Errorf("%w (the run keeps its last checkpoint)", ErrInterrupted)
		}
		if err != nil {
			err = withLastLine(err, &tail)
			if _, statErr := os.Stat(runPath); errors.Is(statErr, os.ErrNotExist) {
				r.writeFailed(j, err, start)
			}
			if line := LastErrorLine(filepath.Join(j.Dir, "log.txt")); line != "" && !strings.Contains(err.Error(), line) {
				return fmt.Errorf("%s: %w: %s", filepath.Base(r.Bin)+" "+j.Args[0], err, line)
			}
			return fmt.Errorf("%s: %w", filepath.Base(r.Bin)+" "+j.Args[0], err)
		}
		rec, err := record.Read(runPath)
		if err != nil {
			return fmt.Errorf("trainer exited cleanly but left no readable run.json: %w", err)
		}
		if rec.Status != "done" {
			return fmt.Errorf("trainer exited cleanly but run.json has status %q", rec.Status)
		}
		return mergeMethod(runPath, rec, j.Method)
	}
}

// mergeMethod adds the grid point's method keys that run.json lacks. The
// dmlbench trainer records them itself from its first write (the cell's
// --method flags), so for it this writes nothing and a kill here loses
// nothing; it serves trainers given with --bin that do not.
func mergeMethod(path string, rec *record.Run, point map[string]string) error {
	changed := false
	if rec.Method == nil {
		rec.Method = map[string]string{}
	}
	for k, v := range point {
		if _, ok := rec.Method[k]; !ok {
			rec.Method[k] = v
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return record.WriteAtomic(path, rec)
}

// evalOutput is the part of `dmlbench eval --format json` a suite keeps.
type evalOutput struct {
	Metrics  record.Metrics     `json:"metrics"` // null: NaN (undefined), "+Inf": +Inf
	Version  string             `json:"version"`
	Timings  map[string]float64 `json:"timings"`
	N        int                `json:"n"`
	Dim      int                `json:"dim"`
	Classes  int                `json:"classes"`
	Warnings []string           `json:"warnings"`
}

func (r *Runner) runEval(ctx context.Context, j Job, logf io.Writer, start time.Time) error {
	var out bytes.Buffer
	var tail lastLine
	if err := r.exec(ctx, j.Args, &out, io.MultiWriter(logf, &tail)); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w", ErrInterrupted)
		}
		err = withLastLine(err, &tail)
		logf.Write(out.Bytes())
		r.writeFailed(j, err, start)
		return fmt.Errorf("eval: %w", err)
	}
	var ev evalOutput
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil {
		logf.Write(out.Bytes())
		r.writeFailed(j, err, start)
		return fmt.Errorf("eval printed no JSON result: %w", err)
	}
	final := ev.Metrics
	if len(final) == 0 {
		r.writeFailed(j, errors.New("no metrics"), start)
		return errors.New("eval returned no metrics")
	}
	var undefined []string // written to run.json as null
	for k, v := range final {
		if math.IsNaN(v) {
			undefined = append(undefined, k)
		}
	}
	sort.Strings(undefined)
	cfg, _ := json.Marshal(map[string]any{
		"emb": j.Eval.Emb, "labels": j.Eval.Labels, "extra": j.Eval.Extra, "args": j.Args,
		"n": ev.N, "dim": ev.Dim, "classes": ev.Classes, "warnings": ev.Warnings, "undefined": undefined,
	})
	timings := map[string]float64{}
	for k, v := range ev.Timings {
		timings[k] = v
	}
	timings["total"] = time.Since(start).Seconds()
	version := ev.Version
	if version == "" {
		version = r.Version
	}
	run := record.Run{
		Schema: record.SchemaVersion, Version: version, Name: j.Name, Dataset: j.Dataset,
		Method: j.Method, Seed: j.Seed, Config: cfg, Status: "done", Final: final, Timings: timings,
	}
	return record.WriteAtomic(filepath.Join(j.Dir, "run.json"), run)
}

// writeFailed leaves a run.json with status "failed" so that reports skip
// the run and the next suite invocation retries it.
func (r *Runner) writeFailed(j Job, cause error, start time.Time) {
	cfg, _ := json.Marshal(map[string]any{"args": j.Args, "error": cause.Error()})
	run := record.Run{
		Schema: record.SchemaVersion, Version: r.Version, Name: j.Name, Dataset: j.Dataset,
		Method: j.Method, Seed: j.Seed, Config: cfg, Status: "failed",
		Timings: map[string]float64{"total": time.Since(start).Seconds()},
	}
	_ = record.WriteAtomic(filepath.Join(j.Dir, "run.json"), run)
}

// ShellJoin quotes args for a shell: a copy-pasteable command line, or a
// line of a batch script.
func ShellJoin(args []string) string { return shellJoin(args) }

// shellJoin quotes args for display (a copy-pasteable command line).
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}

// CommandLine is the command a job runs, shell-quoted.
func CommandLine(bin string, j Job) string { return shellJoin(append([]string{bin}, j.Args...)) }
