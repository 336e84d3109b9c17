package cell

import (
	"bufio"
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/procout"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// Files of a command cell's directory. The command gets TrainerDir as
// its own (Contract.Dir): it may delete or rewrite anything there, while
// dmlbench's own files (cell.json, run.json, these) are beside it.
const (
	TrainerDir  = "trainer"
	StartedFile = "command-started.json" // the command was started at least once
	DoneFile    = "command-done.json"    // the command exited 0 (its status, duration)
	LossFile    = "trainer-loss.tsv"     // optional, in TrainerDir: "EPOCH<TAB>LOSS" lines the trainer appends
	EmbDir      = "embeddings"
)

// MaxFailures is how many starts in a row may fail (an exit status other
// than 0 and ExitDiverged, a crash, outputs that cannot be scored) before
// the cell gives up: Run then returns a *GaveUpError instead of leaving
// the cell to be started again by every rerun.
const MaxFailures = 3

// EvalFunc scores embeddings against their labels.
type EvalFunc func(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error)

// Job is one command cell.
type Job struct {
	// Command is the trainer's argument list, run without a shell from
	// WorkDir (the spec's directory).
	Command []string
	WorkDir string
	// Dir is the cell's directory: dmlbench's files, and Dir/TrainerDir,
	// which Run hands to the command as Contract.Dir.
	Dir string
	// Files are more files or directories of the trainer (relative to
	// WorkDir) whose SHA-256 run.json records beside the files the
	// command names (Provenance).
	Files []string
	// Expect, when set, are the hashes the cell was planned with: a file
	// that differs now fails the cell before the command starts.
	Expect map[string]string
	// Wrap, if set, is a program and its arguments that run the resolved
	// command (isolation: bwrap …); the command's provenance is its own.
	Wrap []string
	// Contract is handed to the command; Run fills Dir and Resume.
	Contract Contract
	// Labels are the labels of each Contract.Embed split's rows, in order.
	Labels   map[string][]int32
	Evaluate EvalFunc
	// Record is run.json's start: name, data set, method keys, seed;
	// Run sets the status, history, final metrics and config.
	Record         *record.Run
	Stdout, Stderr io.Writer
	// OutputHead and OutputTail bound what of each of the command's
	// streams reaches Stdout and Stderr per start (procout.Bounded; 0:
	// procout's defaults).
	OutputHead, OutputTail int
}

// DivergedError is a trainer's exit with ExitDiverged: the configuration
// failed, which is a result (the worst score) rather than an error to retry.
type DivergedError struct{ Msg string }

func (e *DivergedError) Error() string { return e.Msg }

// GaveUpError is a cell whose command failed MaxFailures starts in a row:
// it is not started again (a tuning trial counts as failed, a final seed
// is left out of its row).
type GaveUpError struct{ Err error }

func (e *GaveUpError) Error() string {
	return fmt.Sprintf("%v; it failed %d starts in a row, so the cell is given up", e.Err, MaxFailures)
}

func (e *GaveUpError) Unwrap() error { return e.Err }

// ErrInterrupted: the cell was stopped by a signal to dmlbench; the next
// run starts the command again with DMLBENCH_RESUME=1.
var ErrInterrupted = errors.New("interrupted")

// commandInfo is run.json's config of a command cell: what is equal across
// the seeds of one configuration (reports pool only runs that differ in
// the seed); the command's duration is in run.json's timings ("command").
type commandInfo struct {
	Command []string `json:"command"`
	WorkDir string   `json:"workdir"`
	// Files maps each file the command names under WorkDir (and each of
	// Job.Files) to its SHA-256 (Provenance).
	Files      map[string]string `json:"files,omitempty"`
	Git        *GitState         `json:"git,omitempty"`
	ExitStatus *int              `json:"exit_status,omitempty"`
	Params     map[string]any    `json:"params"`
	Epochs     int               `json:"epochs"`
}

// state is the content of StartedFile and DoneFile: the starts of the
// command since its last fresh start, and the failed ones in a row.
type state struct {
	Attempts   int     `json:"attempts"`
	Failures   int     `json:"failures,omitempty"`
	ExitStatus int     `json:"exit_status"`
	Seconds    float64 `json:"seconds"`
	// Starts are the start times of the attempts (StartedFile), which
	// begin the first epoch each attempt writes (epochSeconds).
	Starts []time.Time `json:"starts,omitempty"`
}

// Run runs the command of j unless an earlier run finished it, scores
// every epoch's embeddings, and writes j.Dir/run.json. It returns the
// embeddings of the last asked epoch, by split. Every error is one line
// naming its cause.
func Run(ctx context.Context, j Job) (map[string]mat32.Matrix, error) {
	c := &j.Contract
	dir := j.Dir
	if dir == "" {
		return nil, errors.New("command cell: no directory given")
	}
	c.Dir = filepath.Join(dir, TrainerDir)
	lock, err := trainers.LockRunDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	cleanStaleTemps(dir, c)
	info := commandInfo{Command: j.Command, WorkDir: j.WorkDir, Params: c.Params, Epochs: c.Epochs}
	if info.Files, err = Provenance(j.Command, j.WorkDir, j.Files); err != nil {
		return nil, err
	}
	if err := CheckFiles(j.Expect, info.Files); err != nil {
		return nil, err
	}
	info.Git = GitStateOf(j.WorkDir)
	run := j.Record
	runPath := filepath.Join(dir, trainers.RunFile)
	seconds := 0.0
	write := func(status string) error {
		run.Status = status
		if seconds > 0 {
			run.Timings = map[string]float64{"command": seconds}
		}
		run.Config, _ = json.Marshal(info)
		return record.WriteAtomic(runPath, run)
	}
	startedPath := filepath.Join(dir, StartedFile)
	var started, done state
	_ = readState(startedPath, &started)
	failed := func(err error) error {
		// A failure of the command or of its outputs counts towards
		// MaxFailures; an interruption or a failure of dmlbench does not.
		started.Failures++
		_ = writeState(startedPath, started)
		if started.Failures >= MaxFailures {
			return &GaveUpError{Err: err}
		}
		return err
	}
	if readState(filepath.Join(dir, DoneFile), &done) != nil {
		if started.Attempts == 0 {
			started.Starts = nil
		}
		if err := prepareDirs(c, started.Attempts == 0); err != nil {
			return nil, err
		}
		started.Attempts++
		started.Starts = append(started.Starts, time.Now())
		if err := writeState(startedPath, started); err != nil {
			return nil, err
		}
		if err := write("running"); err != nil {
			return nil, err
		}
		t0 := time.Now()
		status, err := execute(ctx, j)
		seconds = time.Since(t0).Seconds()
		if status >= 0 {
			info.ExitStatus = &status
		}
		if err != nil {
			st := "failed"
			var de *DivergedError
			switch {
			case errors.Is(err, ErrInterrupted):
				st = "interrupted"
			case errors.As(err, &de):
			case status != -2:
				err = failed(err)
			}
			_ = write(st)
			return nil, err
		}
		done = state{Attempts: started.Attempts, Seconds: seconds}
		if err := writeState(filepath.Join(dir, DoneFile), done); err != nil {
			return nil, err
		}
	}
	zero := 0
	info.ExitStatus, seconds = &zero, done.Seconds
	last, err := score(ctx, j, run)
	if err != nil {
		if ctx.Err() == nil {
			// Outputs that cannot be scored: the next run starts the
			// command afresh rather than scoring the same files again.
			_ = os.Remove(filepath.Join(dir, DoneFile))
			started.Attempts = 0
			err = failed(err)
		}
		_ = write("failed")
		return nil, err
	}
	started.Failures = 0
	_ = writeState(startedPath, started)
	return last, write("done")
}

// prepareDirs makes the trainer's directory and the embeddings directory
// of c; on a fresh start it empties them first, so that nothing of an
// earlier attempt is scored or resumed from. Otherwise the command is
// started again to resume (c.Resume).
func prepareDirs(c *Contract, fresh bool) error {
	c.Resume = !fresh
	for _, p := range []string{c.Embeddings, c.Dir} {
		if fresh {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// score reads and scores every asked epoch's embeddings into run's
// history; run.Final holds the last epoch's metrics.
func score(ctx context.Context, j Job, run *record.Run) (map[string]mat32.Matrix, error) {
	c := j.Contract
	losses := readLosses(filepath.Join(c.Dir, LossFile))
	splits := make([]string, 0, len(c.Embed))
	for s := range c.Embed {
		splits = append(splits, s)
	}
	sort.Strings(splits)
	run.History = nil
	secs := epochSeconds(j.Dir, c, splits)
	last := map[string]mat32.Matrix{}
	for _, e := range c.EmbedEpochs {
		loss, ok := losses[e]
		if !ok {
			loss = math.NaN() // no loss line: unknown, never 0
		}
		ep := record.Epoch{Epoch: e, Loss: loss, Metrics: record.Metrics{}}
		for _, s := range splits {
			emb, err := ReadEmbeddings(c.Embeddings, s, e, c.Embed[s].Count)
			if err != nil {
				return nil, err
			}
			m, err := j.Evaluate(ctx, emb, j.Labels[s])
			if err != nil {
				return nil, fmt.Errorf("epoch %d, %s: %w", e, s, err)
			}
			for k, v := range m {
				if len(splits) > 1 {
					k = s + ":" + k
				}
				ep.Metrics[k] = v
			}
			last[s] = emb
		}
		ep.Seconds = secs[e]
		run.History = append(run.History, ep)
		run.Final = ep.Metrics
	}
	return last, nil
}

// execute runs the command and returns its exit status (−1 when it was
// killed by a signal or stopped by dmlbench, −2 when it did not start).
// When the command exits, or dmlbench is stopped, whatever the command
// left running in its process group is killed, so that a background
// child holding its output open cannot keep the cell waiting.
func execute(ctx context.Context, j Job) (int, error) {
	path, err := resolveCommand(j.Command, j.WorkDir)
	if err != nil {
		return -2, err
	}
	cj, err := json.Marshal(j.Contract)
	if err != nil {
		return -2, err
	}
	resume := "0"
	if j.Contract.Resume {
		resume = "1"
	}
	args := append([]string{path}, j.Command[1:]...)
	if len(j.Wrap) > 0 {
		if path, err = exec.LookPath(j.Wrap[0]); err != nil {
			return -2, fmt.Errorf("%s: not found on PATH", j.Wrap[0])
		}
		args = append(append([]string{path}, j.Wrap[1:]...), args...)
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = j.WorkDir
	cmd.Env = append(os.Environ(), EnvCell+"="+string(cj), EnvResume+"="+resume)
	head, tailBytes := j.OutputHead, j.OutputTail
	if head <= 0 {
		head = procout.DefaultHead
	}
	if tailBytes <= 0 {
		tailBytes = procout.DefaultTail
	}
	outLog := &procout.Bounded{W: orDiscard(j.Stdout), Head: head, Tail: tailBytes, What: "the command's stdout"}
	errLog := &procout.Bounded{W: orDiscard(j.Stderr), Head: head, Tail: tailBytes, What: "the command's stderr"}
	tail := &procout.LastLine{}
	stdout, err := newPipe(outLog)
	if err != nil {
		return -2, err
	}
	stderr, err := newPipe(io.MultiWriter(errLog, tail))
	if err != nil {
		stdout.abandon()
		return -2, err
	}
	cmd.Stdout, cmd.Stderr = stdout.w, stderr.w
	childAttr(cmd)
	// The kernel's parent-death signal follows the thread that forked the
	// child: keep it until the child has been waited for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	stdout.started()
	stderr.started()
	if err != nil {
		stdout.abandon()
		stderr.abandon()
		return -2, fmt.Errorf("command %s: %w", j.Command[0], unwrapExec(err))
	}
	pgid := cmd.Process.Pid
	g := startGuard(pgid)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	interrupted := false
	select {
	case werr = <-waited:
	case <-ctx.Done():
		interrupted = true
		signalGroup(pgid, syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(StopGrace):
			signalGroup(pgid, syscall.SIGKILL)
			<-waited
		}
	}
	sweep(pgid, stdout, stderr)
	g.release()
	_ = outLog.Close()
	_ = errLog.Close()
	if interrupted {
		return -1, fmt.Errorf("command %s: %w (started again with %s=1 by the next run)", j.Command[0], ErrInterrupted, EnvResume)
	}
	return exitStatus(j.Command[0], werr, tail.String())
}

// StopGrace is how long a command has to exit after SIGTERM when dmlbench
// is stopped, before SIGKILL.
var StopGrace = 10 * time.Second

// sweep ends the command's process group once its leader has exited:
// SIGTERM, up to two seconds for the processes holding its output to
// close it, then SIGKILL; output a process outside the group still holds
// is cut off after two more seconds.
func sweep(pgid int, pipes ...*pipe) {
	signalGroup(pgid, syscall.SIGTERM)
	deadline := time.After(2 * time.Second)
	wait := func() bool {
		for _, p := range pipes {
			select {
			case <-p.done:
			case <-deadline:
				return false
			}
		}
		return true
	}
	closed := wait()
	signalGroup(pgid, syscall.SIGKILL)
	if !closed {
		deadline = time.After(2 * time.Second)
		if !wait() {
			for _, p := range pipes {
				p.abandon()
			}
		}
	}
}

// exitStatus reads the command's exit: its status, and the error that
// says what it means (last is its last stderr line).
func exitStatus(name string, werr error, last string) (int, error) {
	if werr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return -1, fmt.Errorf("command %s: %w", name, werr)
	}
	why := ""
	if last != "" {
		why = ": " + last
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, fmt.Errorf("command %s was killed by %s%s (the next run starts it again with %s=1)", name, signalName(ws.Signal()), why, EnvResume)
	}
	code := ee.ExitCode()
	if code == ExitDiverged {
		return code, &DivergedError{Msg: fmt.Sprintf("command %s: the configuration diverged (exit status %d)%s", name, code, why)}
	}
	return code, fmt.Errorf("command %s exited with status %d%s", name, code, why)
}

// pipe carries one of the command's output streams to a writer. The
// command gets w, an *os.File, so that waiting for it does not wait for
// its output: a background process that inherited the stream cannot keep
// the cell waiting (sweep ends it).
type pipe struct {
	r, w *os.File
	done chan struct{}
}

func newPipe(to io.Writer) (*pipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &pipe{r: r, w: w, done: make(chan struct{})}
	go func() {
		_, _ = io.Copy(to, r)
		close(p.done)
	}()
	return p, nil
}

// started closes this process's copy of the write end (the command holds
// its own).
func (p *pipe) started() { _ = p.w.Close() }

// abandon stops copying: the read end is closed and the copy ends.
func (p *pipe) abandon() {
	_ = p.w.Close()
	_ = p.r.Close()
	<-p.done
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// resolveCommand finds the executable: a path with a slash relative to
// workDir, else a name on PATH.
func resolveCommand(command []string, workDir string) (string, error) {
	if len(command) == 0 || command[0] == "" {
		return "", errors.New("command: empty")
	}
	name := command[0]
	if !strings.Contains(name, "/") {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("command %s: not found on PATH", name)
		}
		return p, nil
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(workDir, p)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("command %s: no such file (looked for %s)", name, p)
	case st.IsDir():
		return "", fmt.Errorf("command %s: is a directory", name)
	case st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("command %s: not executable (chmod +x %s, or name its interpreter first: [python3, %s])", name, name, name)
	}
	return p, nil
}

func unwrapExec(err error) error {
	if errors.Is(err, syscall.ENOEXEC) {
		// A script without its "#!" line: the kernel cannot tell what runs it.
		return errors.New("exec format error: not a program; a script needs a first line naming its interpreter (#!/usr/bin/env python3), or put the interpreter first in the command ([python3, train.py])")
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func readState(path string, s *state) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, s)
}

func writeState(path string, s state) error {
	b, _ := json.Marshal(s)
	return atomicfile.WriteBytes(path, append(b, '\n'))
}

// readLosses reads LossFile: the last line of each epoch wins (a restarted
// trainer writes its epochs again). A line that is not "EPOCH<TAB>LOSS"
// is skipped; a loss written as nan or inf is kept as NaN or ±Inf, which
// run.json records as null, as it does an epoch without a line.
func readLosses(path string) map[int]float64 {
	out := map[int]float64{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		a, b, ok := strings.Cut(strings.TrimSpace(sc.Text()), "\t")
		if !ok {
			continue
		}
		e, err1 := strconv.Atoi(strings.TrimSpace(a))
		v, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err1 == nil && err2 == nil {
			out[e] = v
		}
	}
	return out
}
