package tune

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/experiments/cell/celltest"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// fakeTrainer is experiments/cell/testdata/faketrainer, built once per test binary.
var fakeTrainer string

func TestMain(m *testing.M) {
	// The re-executed test binary playing `dmlbench tune cell DIR`.
	if dir := os.Getenv("TUNE_TEST_RUN_CELL"); dir != "" {
		if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var err error
	if fakeTrainer, err = celltest.BuildFakeTrainer("../cell/testdata/faketrainer"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(filepath.Dir(fakeTrainer))
	os.Exit(code)
}

// commandData writes a labelled feature data set: 12 training classes
// (labels 0..11) and 5 test classes (labels 100..104) of 6 rows, 8-D.
func commandData(t *testing.T, dir string) {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	split := func(name string, first, classes int) {
		x := mat32.Matrix{Rows: classes * 6, Cols: 8, Data: make([]float32, classes*6*8)}
		var labels []int32
		for c := range classes {
			centre := make([]float32, 8)
			for j := range centre {
				centre[j] = float32(rng.NormFloat64())
			}
			for r := range 6 {
				i := c*6 + r
				for j := range 8 {
					x.Data[i*8+j] = centre[j] + 0.6*float32(rng.NormFloat64())
				}
				labels = append(labels, int32(first+c))
			}
		}
		// rows of a class are not contiguous in a user's data set
		perm := rng.Perm(x.Rows)
		px := mat32.Matrix{Rows: x.Rows, Cols: 8, Data: make([]float32, len(x.Data))}
		pl := make([]int32, len(labels))
		for i, p := range perm {
			copy(px.Data[i*8:(i+1)*8], x.Data[p*8:(p+1)*8])
			pl[i] = labels[p]
		}
		if err := arrays.SaveNPY(filepath.Join(dir, name+"_emb.npy"), px); err != nil {
			t.Fatal(err)
		}
		if err := arrays.SaveLabelsNPY(filepath.Join(dir, name+"_labels.npy"), pl); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	split("train", 0, 12)
	split("test", 100, 5)
}

const commandSpec = `
out: runs
dataset: dir:data
seed: 0
search: random
budget: 2
folds: 3
fixed: {epochs: 3, embed-dim: 16}
final: {seeds: [0]}
methods:
  - name: alpha
    command: [%[1]s, --flag]
    fixed: {width: 64, act: relu}
    space:
      lr: {low: 1.0e-3, high: 1.0e-1, log: true}
  - name: beta
    command: [%[1]s]
    space:
      lr: {low: 1.0e-4, high: 1.0, log: true}
      opt: {values: [adam, sgd]}
`

func commandPlan(t *testing.T) *Plan {
	t.Helper()
	dir := t.TempDir()
	commandData(t, filepath.Join(dir, "data"))
	path := filepath.Join(dir, "tune.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(commandSpec, fakeTrainer)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Spec: s, Out: s.OutDir("")}
}

// runCommandPlan runs the plan's cells in-process until none is left,
// then Finish; a cell that fails fails the test.
func runCommandPlan(t *testing.T, p *Plan) {
	t.Helper()
	runRounds(t, p, 20, true)
}

type seenLine struct {
	Contract cell.Contract `json:"contract"`
	Resume   bool          `json:"resume"`
	PID      int           `json:"pid"`
}

func readSeen(t *testing.T, dir string) []seenLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "seen.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []seenLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s seenLine
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestCommandMethodsRunTheProtocol(t *testing.T) {
	p := commandPlan(t)
	runCommandPlan(t, p)
	trainLabels, _, _ := arrays.LoadLabels(filepath.Join(p.Spec.dataDir(), "train_labels.npy"))
	for m := range p.Spec.Methods {
		for f := range p.Spec.Folds {
			dir := p.TrialDir(m, 0, f)
			seen := readSeen(t, dir)
			if len(seen) != 1 || seen[0].Resume {
				t.Fatalf("%s: started %d times (resume %v), want once", dir, len(seen), seen)
			}
			c := seen[0].Contract
			// Parameters arrive typed, with the method's fixed settings and the spec's.
			if _, ok := c.Params["lr"].(float64); !ok {
				t.Errorf("%s: params %v: lr is not a number", dir, c.Params)
			}
			if c.Params["embed-dim"] != float64(16) || c.Params["epochs"] != float64(3) {
				t.Errorf("%s: the spec's fixed settings missing from params %v", dir, c.Params)
			}
			if m == 0 && (c.Params["width"] != float64(64) || c.Params["act"] != "relu") {
				t.Errorf("%s: fixed settings missing from params %v", dir, c.Params)
			}
			if m == 1 && c.Params["opt"] != "adam" && c.Params["opt"] != "sgd" {
				t.Errorf("%s: categorical opt = %v", dir, c.Params["opt"])
			}
			if c.Epochs != 3 || c.Seed != 0 || c.Stage != StageTune || c.Fold != f || !reflect.DeepEqual(c.EmbedEpochs, []int{1, 2, 3}) {
				t.Errorf("%s: contract %+v", dir, c)
			}
			// No test row, file or item reaches a tuning cell.
			b, _ := json.Marshal(c)
			if strings.Contains(string(b), "test") || len(c.Embed) != 1 || c.Embed["val"].Split != "train" || c.Train.Split != "train" {
				t.Errorf("%s: a tuning cell's contract names the test split: %s", dir, b)
			}
			// Its data directory is the cell's training-only view.
			if abs, _ := filepath.Abs(dir); c.Data != filepath.Join(abs, TrainViewDir) || c.ScheduleEpochs != 3 {
				t.Errorf("%s: data %s, schedule_epochs %d", dir, c.Data, c.ScheduleEpochs)
			}
			if _, err := os.Stat(filepath.Join(c.Data, "test_labels.npy")); err == nil {
				t.Errorf("%s: the view holds test_labels.npy", dir)
			}
			train, _ := arrays.LoadIndices(c.Train.Rows)
			val, _ := arrays.LoadIndices(c.Embed["val"].Rows)
			if len(train)+len(val) != len(trainLabels) || len(val) != c.Embed["val"].Count {
				t.Errorf("%s: %d training + %d validation rows of %d", dir, len(train), len(val), len(trainLabels))
			}
			valClass := map[int32]bool{}
			for _, r := range val {
				valClass[trainLabels[r]] = true
			}
			for _, r := range train {
				if valClass[trainLabels[r]] {
					t.Fatalf("%s: class %d is in both the training and the validation rows", dir, trainLabels[r])
				}
			}
			r, err := record.Read(filepath.Join(dir, trainers.RunFile))
			if err != nil || r.Status != "done" || len(r.History) != 3 {
				t.Fatalf("%s: run.json %v %+v", dir, err, r)
			}
			var info map[string]any
			_ = json.Unmarshal(r.Config, &info)
			// The trainer's binary lies outside the spec's directory, as an
			// interpreter does: not hashed.
			if info["exit_status"] != float64(0) || info["files"] != nil {
				t.Errorf("%s: run.json config %v", dir, info)
			}
			if _, ok := r.History[2].Metrics["MAP@R"]; !ok || r.History[0].Loss == 0 {
				t.Errorf("%s: history %+v", dir, r.History)
			}
		}
	}
	sum, err := ReadSummary(p.Out)
	if err != nil || !sum.Done {
		t.Fatalf("tune.json: %v %+v", err, sum)
	}
	// Final cells embed every test row, for the epochs chosen on validation.
	for m, ms := range sum.Methods {
		best := ms.Trials[ms.Best]
		for f := range p.Spec.Folds {
			dir := p.FinalDir(m, f, 0)
			c := readSeen(t, dir)[0].Contract
			// The schedule is the tuning cells' (3 epochs), stopped at the chosen epoch.
			if c.Stage != StageFinal || c.Embed["test"].Count != 30 || c.Epochs != best.BestEpochs[f] || c.ScheduleEpochs != 3 || !reflect.DeepEqual(c.EmbedEpochs, []int{c.Epochs}) {
				t.Errorf("%s: final contract %+v (best epochs %v)", dir, c, best.BestEpochs)
			}
		}
		for _, v := range []string{Separated, Concatenated} {
			r, err := record.Read(filepath.Join(ResultsDir(p.Out), ms.Name, v, "s0", trainers.RunFile))
			if err != nil || r.Final["MAP@R"] <= 0 {
				t.Errorf("%s %s: %v %+v", ms.Name, v, err, r)
			}
		}
	}
}

// commandCell writes a single tuning cell of the fake trainer with params.
func commandCell(t *testing.T, command []string, params map[string]string) string {
	t.Helper()
	root := t.TempDir()
	commandData(t, filepath.Join(root, "data"))
	dir := filepath.Join(root, "cell")
	cfg := trainers.Defaults()
	cfg.Dataset, cfg.Epochs, cfg.Metrics = "dir:data", 3, []string{"MAP@R"}
	c := Cell{Stage: StageTune, Method: "m", Fold: 1, Folds: 3, Params: params, Objective: "MAP@R", Config: cfg,
		Command: command, WorkDir: root, DataDir: filepath.Join(root, "data")}
	if err := writeCell(dir, &c); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCommandCellFaults(t *testing.T) {
	for _, tc := range []struct {
		mode, command, want string
	}{
		{mode: "missing-epoch", want: "epoch 2: the trainer wrote no embeddings of val"},
		{mode: "wrong-rows", want: "val_e001.npy: 23 rows, but 24 rows of val were asked"},
		{mode: "nan", want: "val_e002.npy"},
		{mode: "int-dtype", want: "val_e001.npy: dtype <i8; embeddings must be float16, float32 or float64"},
		{mode: "one-d", want: "val_e001.npy: shape (192,); embeddings must be 2-D"},
		{mode: "fail", want: "exited with status 1: faketrainer: CUDA out of memory"},
		{mode: "diverge", want: "the configuration diverged (exit status 3): loss is NaN at step 12"},
		{command: "no-such-trainer-dmlbench", want: "command no-such-trainer-dmlbench: not found on PATH"},
		{command: "./train.sh", want: "command ./train.sh: not executable"},
		{command: "./missing.py", want: "command ./missing.py: no such file"},
	} {
		name := tc.mode + tc.command
		t.Run(name, func(t *testing.T) {
			cmd := []string{fakeTrainer}
			if tc.command != "" {
				cmd = []string{tc.command}
			}
			dir := commandCell(t, cmd, map[string]string{"mode": tc.mode, "lr": "0.01"})
			if tc.command == "./train.sh" {
				_ = os.WriteFile(filepath.Join(filepath.Dir(dir), "train.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o644)
			}
			err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line holding %q", err, tc.want)
			}
			if tc.mode == "nan" && !strings.Contains(strings.ToLower(err.Error()), "nan") {
				t.Errorf("error %q does not name the NaN", err)
			}
			r, rerr := record.Read(filepath.Join(dir, trainers.RunFile))
			if tc.command == "" && (rerr != nil || r.Status != "failed") {
				t.Errorf("run.json: %v %+v", rerr, r)
			}
			if tc.mode == "wrong-rows" {
				// The rerun starts the command afresh (DMLBENCH_RESUME unset).
				_ = RunCell(context.Background(), dir, nil, CellOptions{Version: "test"})
				if seen := readSeen(t, dir); len(seen) != 2 || seen[1].Resume {
					t.Errorf("rerun after unscorable output: starts %+v, want a fresh second start", seen)
				}
			}
			_, ferr := os.Stat(filepath.Join(dir, FailedFile))
			if (ferr == nil) != (tc.mode == "diverge") {
				t.Errorf("%s written: %v; only a diverged configuration is a finished trial", FailedFile, ferr == nil)
			}
			if TrialFailed(err) != (tc.mode == "diverge") {
				t.Errorf("TrialFailed(%q) = %v; only exit status %d fails the trial, any other error the cell", err, TrialFailed(err), cell.ExitDiverged)
			}
		})
	}
}

// history is a finished cell's per-epoch record, for comparing runs.
func history(t *testing.T, dir string) []record.Epoch {
	t.Helper()
	r, err := record.Read(filepath.Join(dir, trainers.RunFile))
	if err != nil || r.Status != "done" {
		t.Fatalf("%s: %v %+v", dir, err, r)
	}
	for i := range r.History {
		r.History[i].Seconds = 0
	}
	return r.History
}

func TestCommandKilledIsResumed(t *testing.T) {
	params := map[string]string{"lr": "0.003"}
	ref := commandCell(t, []string{fakeTrainer}, params)
	if err := RunCell(context.Background(), ref, nil, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	want := history(t, ref)

	// kill -9 of the command after its second epoch
	params["kill_at"] = "2"
	dir := commandCell(t, []string{fakeTrainer}, params)
	err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"})
	if err == nil || !strings.Contains(err.Error(), "killed by SIGKILL (signal 9)") {
		t.Fatalf("first run: %v", err)
	}
	if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	seen := readSeen(t, dir)
	if len(seen) != 2 || seen[0].Resume || !seen[1].Resume || !seen[1].Contract.Resume {
		t.Errorf("starts %+v: want a first start, then one with DMLBENCH_RESUME=1", seen)
	}
	if got := history(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("resumed history %+v\nuninterrupted %+v", got, want)
	}

	// kill -9 of the dmlbench process running the cell, mid-command: the
	// trainer holds after writing epoch 1 until it dies with its caller
	params = map[string]string{"lr": "0.003", "hold_at": "1"}
	dir = commandCell(t, []string{fakeTrainer}, params)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "TUNE_TEST_RUN_CELL="+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, cell.EmbDir, cell.EmbeddingFile("val", 1)+".npy")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(first); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			t.Fatal("the trainer wrote no epoch within 30 s")
		}
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	pid := readSeen(t, dir)[0].PID
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the trainer (pid %d) outlived the killed dmlbench process", pid)
		}
	}
	if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if got := history(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("history after kill -9 of dmlbench %+v\nuninterrupted %+v", got, want)
	}
	files, _ := filepath.Glob(filepath.Join(dir, cell.EmbDir, "*"))
	sort.Strings(files)
	if len(files) != 3 {
		t.Errorf("embeddings %v, want one per epoch and no temporary file", files)
	}
}

func TestCommandSpecErrors(t *testing.T) {
	base := "dataset: dir:data\nbudget: 2\nfixed: {epochs: 2}\nmethods:\n"
	for _, tc := range []struct{ method, want string }{
		{"  - {name: a, command: [], space: {lr: {low: 0.1, high: 1}}}", "methods[0].command (line 5): want a list"},
		{"  - {name: a, command: python3, space: {lr: {low: 0.1, high: 1}}}", "want a list"},
		{"  - {command: [python3, t.py], space: {lr: {low: 0.1, high: 1}}}", "a command method needs a name"},
		{"  - {name: a, loss: margin, command: [python3, t.py], space: {lr: {low: 0.1, high: 1}}}", "drop loss and miner"},
		{"  - {name: a, command: [python3, t.py], space: {epochs: {low: 1, high: 4}}}", "space.epochs: cannot be searched"},
		{"  - {name: a, command: [python3, t.py]}", "empty search space"},
		{"  - {name: ../a, command: [python3, t.py], space: {lr: {low: 0.1, high: 1}}}", "must be letters, digits"},
		{"  - {name: a, command: [python3, t.py], fixed: {epochs: 9}, space: {lr: {low: 0.1, high: 1}}}", "fixed.epochs (line 5): cannot be one method's setting (it sets what a trial costs"},
		{"  - {name: a, command: [python3, t.py], fixed: {convention: roth}, space: {lr: {low: 0.1, high: 1}}}", "it sets how dmlbench scores every method"},
		{"  - {name: a, command: [python3, t.py], space: {batch-size: {values: [32, 64]}}}", "space.batch-size: cannot be searched (it sets what a trial costs"},
		{"  - {name: a, command: [python3, t.py], space: {bs: {values: [8, 08, 8.0]}}}", `values "8" and "08" are the same setting`},
		{"  - {name: a, command: [python3, t.py], fixed: {lr: 1}, space: {lr: {low: 0.1, high: 1}}}", "also in the method's fixed"},
		{"  - {name: a, command: [python3, t.py], space: {lr: {low: 1, high: 0.1}}}", "lr"},
	} {
		_, err := Parse([]byte(base+tc.method+"\n"), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.method, err, tc.want)
		}
	}
	_, err := Parse([]byte("dataset: omniglot\nbudget: 2\nfixed: {epochs: 2}\nmethods:\n  - {name: a, command: [python3, t.py], space: {lr: {low: 0.1, high: 1}}}\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "needs dataset: dir:PATH") {
		t.Errorf("built-in data set: %v", err)
	}
}

// TestCommandSpecProblemsInOnePass: every problem of command methods is
// reported by one load, beside the spec's own.
func TestCommandSpecProblemsInOnePass(t *testing.T) {
	spec := `dataset: dir:data
budget: 0
fixed: {epochs: 2}
methods:
  - name: a
    command: [python3, t.py]
    fixed: {epochs: 5}
    space: {lr: {low: 0.1, high: 1}}
  - name: b
    command: python3
    space: {iters-per-epoch: {values: [10, 20]}, lr: {low: 0.1, high: 1}}
`
	_, err := Parse([]byte(spec), Options{})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"budget = 0", "method a.fixed.epochs (line 7): cannot be one method's setting", "methods[1].command (line 10): want a list", "method b.space.iters-per-epoch: cannot be searched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems\n%v\nmiss %q", err, want)
		}
	}
}

// TestCommandTuningOpensNoTestFile: the tuning stage of command methods,
// load included, runs without the test split's files.
func TestCommandTuningOpensNoTestFile(t *testing.T) {
	p := commandPlan(t)
	for _, f := range []string{"test_labels.npy", "test_emb.npy"} {
		if err := os.Remove(filepath.Join(p.Spec.dataDir(), f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(p.Spec.File, Options{}); err != nil {
		t.Fatalf("load without test files: %v", err)
	}
	cells, _, err := p.Next()
	if err != nil || len(cells) == 0 {
		t.Fatalf("next: %v %v", cells, err)
	}
	for _, i := range cells {
		dir, _ := p.CellDir(i)
		if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil {
			t.Fatalf("tuning cell %s without test files: %v", dir, err)
		}
	}
}

// TestCommandFingerprint: a command is part of its method's fingerprint
// key; a changed command is refused, naming the method.
func TestCommandFingerprint(t *testing.T) {
	p := commandPlan(t)
	fp := p.Spec.Fingerprint()
	if !strings.Contains(fp["methods.alpha"], `"command":[`) || !strings.Contains(fp["methods.alpha"], "--flag") {
		t.Fatalf("fingerprint of a command method %s", fp["methods.alpha"])
	}
	cur := p.Spec.Fingerprint()
	p.Spec.Methods[0].Command = []string{"python3", "other.py"}
	_, err := compareFingerprints(cur, p.Spec.Fingerprint(), p.Out)
	if !errors.Is(err, ErrSpecChanged) || !strings.Contains(err.Error(), "methods.alpha") || strings.Contains(err.Error(), "methods.beta") {
		t.Errorf("changed command: %v", err)
	}
}
