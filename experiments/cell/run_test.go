package cell

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/experiments/cell/celltest"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// fakeTrainer is testdata/faketrainer, built once per test binary.
var fakeTrainer string

func TestMain(m *testing.M) {
	// The re-executed test binary playing the dmlbench process of a cell.
	if spec := os.Getenv("CELL_TEST_RUN"); spec != "" {
		var j testJob
		if err := json.Unmarshal([]byte(spec), &j); err != nil {
			panic(err)
		}
		_, err := Run(context.Background(), j.job())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var err error
	if fakeTrainer, err = celltest.BuildFakeTrainer("./testdata/faketrainer"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(filepath.Dir(fakeTrainer))
	os.Exit(code)
}

// testJob is what a test hands to the re-executed binary.
type testJob struct {
	Command []string
	Root    string
	Params  map[string]any
}

// job is a 3-epoch job of 24 validation rows of the data set under Root
// (writeData), run from Root, in Root/cell.
func (t testJob) job() Job {
	dir := filepath.Join(t.Root, "cell")
	_ = os.MkdirAll(dir, 0o755)
	train, val := make([]int, 0, 48), make([]int, 0, 24)
	for i := range 72 {
		if i%3 == 0 {
			val = append(val, i)
		} else {
			train = append(train, i)
		}
	}
	_ = WriteRows(filepath.Join(dir, "train_rows.npy"), train)
	_ = WriteRows(filepath.Join(dir, "val_rows.npy"), val)
	labels, _, _ := arrays.LoadLabels(filepath.Join(t.Root, "data", "train_labels.npy"))
	vl := make([]int32, len(val))
	for i, r := range val {
		vl[i] = labels[r]
	}
	c := Contract{
		Version: ContractVersion, Stage: "tune", Method: "m", Folds: 3, Params: t.Params, Epochs: 3,
		Data: filepath.Join(t.Root, "data"), EmbedEpochs: []int{1, 2, 3},
		Train:      Rows{Split: "train", Rows: filepath.Join(dir, "train_rows.npy"), Count: len(train)},
		Embed:      map[string]Rows{"val": {Split: "train", Rows: filepath.Join(dir, "val_rows.npy"), Count: len(val)}},
		Embeddings: filepath.Join(dir, EmbDir),
	}
	cfg := trainers.Defaults()
	cfg.Metrics = []string{"MAP@R"}
	evaluate, err := trainers.NewEvaluator(cfg)
	if err != nil {
		panic(err)
	}
	return Job{
		Command: t.Command, WorkDir: t.Root, Dir: dir, Contract: c, Labels: map[string][]int32{"val": vl},
		Evaluate: EvalFunc(evaluate), Record: &record.Run{Schema: record.SchemaVersion, Name: "cell", Method: map[string]string{"method": "m"}},
	}
}

// newJob writes a data set of 12 classes × 6 rows, 8-D features, under a
// new directory and returns the job of command with params.
func newJob(t *testing.T, command []string, params map[string]any) (testJob, Job) {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	x := mat32.Matrix{Rows: 72, Cols: 8, Data: make([]float32, 72*8)}
	labels := make([]int32, 72)
	for i := range labels {
		labels[i] = int32(i % 12)
		for j := range 8 {
			x.Data[i*8+j] = float32(int(labels[i])*(j+1)%5) + 0.3*float32(rng.NormFloat64())
		}
	}
	if err := arrays.SaveNPY(filepath.Join(data, "train_emb.npy"), x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(filepath.Join(data, "train_labels.npy"), labels); err != nil {
		t.Fatal(err)
	}
	if params == nil {
		params = map[string]any{}
	}
	params["lr"] = 0.01
	tj := testJob{Command: command, Root: root, Params: params}
	return tj, tj.job()
}

func readRun(t *testing.T, j Job) *record.Run {
	t.Helper()
	r, err := record.Read(filepath.Join(j.Dir, trainers.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitDead waits up to d for pid to be gone (or a zombie).
func waitDead(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			return false
		}
	}
	return true
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(end) {
			t.Fatalf("no pid in %s within 30 s", path)
		}
	}
}

// TestBackgroundChildDoesNotHoldCell: a trainer that leaves a process
// running with its stderr open (a logger started with &) finishes the
// cell as soon as it exits, and the process is killed with its group;
// stopped by a signal, the cell returns within seconds and run.json says
// interrupted.
func TestBackgroundChildDoesNotHoldCell(t *testing.T) {
	_, j := newJob(t, []string{fakeTrainer}, map[string]any{"mode": "background"})
	t0 := time.Now()
	if _, err := Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	// Far below the background child's 120 s, far above a loaded
	// machine's start-up and sweep (StopGrace does not apply: nothing
	// stopped the cell).
	if d := time.Since(t0); d > 60*time.Second {
		t.Errorf("the cell took %v after its trainer left a background child (which sleeps 120 s)", d)
	}
	pid := readPID(t, filepath.Join(j.Dir, "background.pid"))
	if !waitDead(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the background child %d outlived its cell", pid)
	}

	_, j = newJob(t, []string{fakeTrainer}, map[string]any{"mode": "background", "sleep_ms": 1000})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, j); done <- err }()
	pid = readPID(t, filepath.Join(j.Dir, "background.pid"))
	cancel()
	t0 = time.Now()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the interrupted cell did not return within 20 s")
	}
	if d := time.Since(t0); d > 5*time.Second || !errors.Is(err, ErrInterrupted) {
		t.Errorf("interrupted cell: %v after %v", err, d)
	}
	if r := readRun(t, j); r.Status != "interrupted" {
		t.Errorf("run.json status %q after an interruption", r.Status)
	}
	if !waitDead(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the background child %d outlived the interrupted cell", pid)
	}
}

// TestLauncherGrandchildDiesWithDmlbench: kill -9 of the process running
// a cell whose command is a launcher (sh running the trainer) kills the
// trainer too, not only the launcher.
func TestLauncherGrandchildDiesWithDmlbench(t *testing.T) {
	// The trainer logs to a file, as many do: no broken pipe ends it.
	tj, j := newJob(t, []string{"/bin/sh", "-c", fakeTrainer + " >/dev/null 2>&1; exit $?"}, map[string]any{"sleep_ms": 4000})
	spec, _ := json.Marshal(tj)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "CELL_TEST_RUN="+string(spec))
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	seen := filepath.Join(j.Dir, "seen.jsonl")
	var pid int
	for end := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(seen)
		var s struct{ PID int }
		if json.Unmarshal(bytes.TrimSpace(b), &s) == nil {
			pid = s.PID
		}
		if time.Now().After(end) {
			child.Process.Kill()
			t.Fatal("the trainer did not start within 30 s")
		}
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	if !waitDead(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the trainer (pid %d, a grandchild) outlived the killed dmlbench process", pid)
	}
}

// TestNonFiniteLossIsNull: loss lines of nan, -inf or no number are null
// in run.json; the cell is done, and a rerun does nothing.
func TestNonFiniteLossIsNull(t *testing.T) {
	_, j := newJob(t, []string{fakeTrainer}, map[string]any{"mode": "nan-loss"})
	if _, err := Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(j.Dir, trainers.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"loss": null`); n != 3 || !strings.Contains(string(b), `"status": "done"`) {
		t.Fatalf("run.json holds %d null losses (want 3):\n%s", n, b)
	}
	r := readRun(t, j)
	for _, e := range r.History {
		if !math.IsNaN(e.Loss) {
			t.Errorf("epoch %d: loss %v, want unknown (NaN)", e.Epoch, e.Loss)
		}
	}
}

// TestOutputBounded: a trainer printing 4 MiB on each stream leaves
// each stream's head and tail, and a line saying how much was left out.
func TestOutputBounded(t *testing.T) {
	_, j := newJob(t, []string{fakeTrainer}, map[string]any{"mode": "spam"})
	var out, errOut bytes.Buffer
	j.Stdout, j.Stderr, j.OutputHead, j.OutputTail = &out, &errOut, 64<<10, 64<<10
	if _, err := Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*bytes.Buffer{"stdout": &out, "stderr": &errOut} {
		s := b.String()
		if len(s) > 128<<10+200 {
			t.Errorf("%s: %d bytes kept of 4 MiB with head and tail 64 KiB", name, len(s))
		}
		if !strings.HasPrefix(s, "spam begins") || !strings.Contains(s, "spam ends") || !strings.Contains(s, "left out here, not kept anywhere") {
			t.Errorf("%s: head %q, tail %q", name, s[:min(len(s), 40)], s[max(0, len(s)-200):])
		}
	}
}

// TestTrainerDirectoryIsItsOwn: the command's directory is a
// subdirectory of the cell's; a trainer removing it, or a cell.json in
// it, leaves dmlbench's files and the embeddings, and the cell is done.
func TestTrainerDirectoryIsItsOwn(t *testing.T) {
	_, j := newJob(t, []string{fakeTrainer}, map[string]any{"mode": "rmtree"})
	marker := filepath.Join(j.Dir, "cell.json")
	if err := os.WriteFile(marker, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the trainer removed the cell's own file: %v", err)
	}
	if r := readRun(t, j); r.Status != "done" || len(r.History) != 3 {
		t.Errorf("run.json %+v", r)
	}
	var c struct{ Dir string }
	b, _ := os.ReadFile(filepath.Join(j.Dir, "seen.jsonl"))
	var line struct{ Contract struct{ Dir string } }
	_ = json.Unmarshal(bytes.TrimSpace(b), &line)
	c.Dir = line.Contract.Dir
	if c.Dir != filepath.Join(j.Dir, TrainerDir) {
		t.Errorf("the trainer's dir is %q, want %q", c.Dir, filepath.Join(j.Dir, TrainerDir))
	}
}

// TestCommandGivesUp: a command failing MaxFailures starts in a row is
// given up (GaveUpError); fewer failures are plain errors, retried.
func TestCommandGivesUp(t *testing.T) {
	_, j := newJob(t, []string{fakeTrainer}, map[string]any{"mode": "fail"})
	for i := 1; i <= MaxFailures; i++ {
		_, err := Run(context.Background(), j)
		var gu *GaveUpError
		if err == nil || errors.As(err, &gu) != (i == MaxFailures) {
			t.Fatalf("start %d: %v", i, err)
		}
		if i == MaxFailures && !strings.Contains(err.Error(), "CUDA out of memory") {
			t.Errorf("given up without the cause: %v", err)
		}
	}
}

func sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestProvenance: run.json records the SHA-256 of the files the command
// names inside its working directory (the script, not the interpreter)
// and of the spec's extra files and directories, and the git commit and
// dirty flag of the work tree; a file changed since the cell was planned
// fails it, naming the file.
func TestProvenance(t *testing.T) {
	tj, _ := newJob(t, nil, nil)
	root := tj.Root
	script := filepath.Join(root, "train.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+fakeTrainer+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "pkg", "__pycache__"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "pkg", "model.py"), []byte("x = 1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "pkg", "__pycache__", "model.pyc"), []byte("junk"), 0o644)
	tj.Command = []string{"/bin/sh", "train.sh", "--data", "data"}
	git, gitErr := exec.LookPath("git")
	if gitErr == nil {
		for _, args := range [][]string{{"init", "-q"}, {"add", "train.sh", "pkg/model.py"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
			if out, err := exec.Command(git, append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	}
	j := tj.job()
	j.Files = []string{"pkg"}
	got, err := Provenance(j.Command, root, j.Files)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["train.sh"] != sha(t, script) || len(got["pkg/"]) != 64 {
		t.Fatalf("provenance %v", got)
	}
	os.WriteFile(filepath.Join(root, "pkg", "__pycache__", "model.pyc"), []byte("other junk"), 0o644)
	if again, _ := Provenance(j.Command, root, j.Files); again["pkg/"] != got["pkg/"] {
		t.Error("a __pycache__ file changed the package's hash")
	}
	os.WriteFile(filepath.Join(root, "pkg", "model.py"), []byte("x = 2\n"), 0o644)
	if again, _ := Provenance(j.Command, root, j.Files); again["pkg/"] == got["pkg/"] {
		t.Error("an edited module left the package's hash")
	}
	os.WriteFile(filepath.Join(root, "pkg", "model.py"), []byte("x = 1\n"), 0o644)
	if _, err := Provenance(j.Command, root, []string{"nope.py"}); err == nil || !strings.Contains(err.Error(), "nope.py") {
		t.Errorf("missing extra file: %v", err)
	}

	j.Expect = got
	if _, err := Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	var info struct {
		Files map[string]string
		Git   *GitState
	}
	if err := json.Unmarshal(readRun(t, j).Config, &info); err != nil {
		t.Fatal(err)
	}
	if info.Files["train.sh"] != got["train.sh"] || len(info.Files) != 2 {
		t.Errorf("run.json files %v", info.Files)
	}
	if gitErr == nil && (info.Git == nil || len(info.Git.Commit) != 40 || info.Git.Dirty) {
		t.Errorf("run.json git %+v, want the commit, clean", info.Git)
	}

	os.WriteFile(script, []byte("#!/bin/sh\nexec "+fakeTrainer+" # edited\n"), 0o644)
	if gitErr == nil {
		if st := GitStateOf(root); st == nil || !st.Dirty {
			t.Errorf("git state after an edit: %+v", st)
		}
	}
	os.Remove(filepath.Join(j.Dir, DoneFile))
	_, err = Run(context.Background(), j)
	if err == nil || !strings.Contains(err.Error(), "train.sh changed since this cell was planned") {
		t.Errorf("edited script: %v", err)
	}
}
