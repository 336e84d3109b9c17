package cell

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// Files of a command cell's directory.
const (
	StartedFile = "command-started.json" // the command was started at least once
	DoneFile    = "command-done.json"    // the command exited 0 (its status, duration)
	LossFile    = "trainer-loss.tsv"     // optional: "EPOCH<TAB>LOSS" lines the trainer appends
	EmbDir      = "embeddings"
)

// EvalFunc scores embeddings against their labels.
type EvalFunc func(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error)

// Job is one command cell.
type Job struct {
	// Command is the trainer's argument list, run without a shell from
	// WorkDir (the spec's directory).
	Command []string
	WorkDir string
	// Wrap, if set, is a program and its arguments that run the resolved
	// command (isolation: bwrap …); the command's provenance is its own.
	Wrap []string
	// Contract is handed to the command; Run fills Resume.
	Contract Contract
	// Labels are the labels of each Contract.Embed split's rows, in order.
	Labels   map[string][]int32
	Evaluate EvalFunc
	// Record is run.json's start: name, data set, method keys, seed;
	// Run sets the status, history, final metrics and config.
	Record         *record.Run
	Stdout, Stderr io.Writer
}

// DivergedError is a trainer's exit with ExitDiverged: the configuration
// failed, which is a result (the worst score) rather than an error to retry.
type DivergedError struct{ Msg string }

func (e *DivergedError) Error() string { return e.Msg }

// ErrInterrupted: the cell was stopped by a signal to dmlbench; the next
// run starts the command again with DMLBENCH_RESUME=1.
var ErrInterrupted = errors.New("interrupted")

// commandInfo is run.json's config of a command cell: what is equal across
// the seeds of one configuration (reports pool only runs that differ in
// the seed); the command's duration is in run.json's timings ("command").
type commandInfo struct {
	Command      []string       `json:"command"`
	WorkDir      string         `json:"workdir"`
	Script       string         `json:"script,omitempty"`
	ScriptSHA256 string         `json:"script_sha256,omitempty"`
	ExitStatus   *int           `json:"exit_status,omitempty"`
	Params       map[string]any `json:"params"`
	Epochs       int            `json:"epochs"`
}

// state is the content of StartedFile and DoneFile.
type state struct {
	Attempts   int     `json:"attempts"`
	ExitStatus int     `json:"exit_status"`
	Seconds    float64 `json:"seconds"`
	// Starts are the start times of the attempts (StartedFile), which
	// begin the first epoch each attempt writes (epochSeconds).
	Starts []time.Time `json:"starts,omitempty"`
}

// Run runs the command of j unless an earlier run finished it, scores
// every epoch's embeddings, and writes Contract.Dir/run.json. It returns
// the embeddings of the last asked epoch, by split. Every error is one
// line naming its cause.
func Run(ctx context.Context, j Job) (map[string]mat32.Matrix, error) {
	c := &j.Contract
	dir := c.Dir
	lock, err := trainers.LockRunDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	cleanStaleTemps(c)
	info := commandInfo{Command: j.Command, WorkDir: j.WorkDir, Params: c.Params, Epochs: c.Epochs}
	info.Script, info.ScriptSHA256 = scriptHash(j.Command, j.WorkDir)
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
	var done state
	if readState(filepath.Join(dir, DoneFile), &done) != nil {
		var started state
		if readState(filepath.Join(dir, StartedFile), &started) == nil && started.Attempts > 0 {
			c.Resume = true
		} else {
			// A first start: nothing of an earlier attempt may be scored.
			_ = os.RemoveAll(c.Embeddings)
			_ = os.Remove(filepath.Join(dir, LossFile))
		}
		started.Attempts++
		started.Starts = append(started.Starts, time.Now())
		if err := os.MkdirAll(c.Embeddings, 0o755); err != nil {
			return nil, err
		}
		if err := writeState(filepath.Join(dir, StartedFile), started); err != nil {
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
			if errors.Is(err, ErrInterrupted) {
				st = "interrupted"
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
			_ = os.Remove(filepath.Join(dir, StartedFile))
		}
		_ = write("failed")
		return nil, err
	}
	return last, write("done")
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
	secs := epochSeconds(c, splits)
	last := map[string]mat32.Matrix{}
	for _, e := range c.EmbedEpochs {
		ep := record.Epoch{Epoch: e, Loss: losses[e], Metrics: record.Metrics{}}
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

// execute runs the command and returns its exit status (−1 when it did
// not start or was killed by a signal).
func execute(ctx context.Context, j Job) (int, error) {
	path, err := resolveCommand(j.Command, j.WorkDir)
	if err != nil {
		return -1, err
	}
	cj, err := json.Marshal(j.Contract)
	if err != nil {
		return -1, err
	}
	resume := "0"
	if j.Contract.Resume {
		resume = "1"
	}
	args := append([]string{path}, j.Command[1:]...)
	if len(j.Wrap) > 0 {
		if path, err = exec.LookPath(j.Wrap[0]); err != nil {
			return -1, fmt.Errorf("%s: not found on PATH", j.Wrap[0])
		}
		args = append(append([]string{path}, j.Wrap[1:]...), args...)
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = j.WorkDir
	cmd.Env = append(os.Environ(), EnvCell+"="+string(cj), EnvResume+"="+resume)
	tail := &lastLine{}
	cmd.Stdout = orDiscard(j.Stdout)
	cmd.Stderr = io.MultiWriter(orDiscard(j.Stderr), tail)
	childAttr(cmd)
	// The kernel's parent-death signal follows the thread that forked the
	// child: keep it until the child has been waited for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("command %s: %w", j.Command[0], unwrapExec(err))
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
		return -1, fmt.Errorf("command %s: %w (started again with %s=1 by the next run)", j.Command[0], ErrInterrupted, EnvResume)
	}
	if werr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return -1, fmt.Errorf("command %s: %w", j.Command[0], werr)
	}
	why := ""
	if s := tail.String(); s != "" {
		why = ": " + s
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, fmt.Errorf("command %s was killed by %s%s (the next run starts it again with %s=1)", j.Command[0], signalName(ws.Signal()), why, EnvResume)
	}
	code := ee.ExitCode()
	if code == ExitDiverged {
		return code, &DivergedError{Msg: fmt.Sprintf("command %s: the configuration diverged (exit status %d)%s", j.Command[0], code, why)}
	}
	return code, fmt.Errorf("command %s exited with status %d%s", j.Command[0], code, why)
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

// scriptHash is the first file of the command (the executable when given
// as a path, else the first argument naming a file in workDir) and its
// SHA-256.
func scriptHash(command []string, workDir string) (string, string) {
	for i, a := range command {
		if i == 0 && !strings.Contains(a, "/") {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		if !fileExists(p) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", ""
		}
		h := sha256.Sum256(b)
		return a, hex.EncodeToString(h[:])
	}
	return "", ""
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
// trainer writes its epochs again).
func readLosses(path string) map[int]float64 {
	out := map[int]float64{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := strings.Cut(strings.TrimSpace(sc.Text()), "\t")
		if !ok {
			continue
		}
		e, err1 := strconv.Atoi(a)
		v, err2 := strconv.ParseFloat(b, 64)
		if err1 == nil && err2 == nil {
			out[e] = v
		}
	}
	return out
}

// lastLine keeps the last non-empty line written to it (at most 512 bytes).
type lastLine struct {
	mu   sync.Mutex
	buf  []byte
	last string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		if s := strings.TrimSpace(string(l.buf[:i])); s != "" {
			l.last = s
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 4096 {
		l.buf = append([]byte(nil), l.buf[len(l.buf)-512:]...)
	}
	return len(p), nil
}

func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.last
	if t := strings.TrimSpace(string(l.buf)); t != "" {
		s = t
	}
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}
