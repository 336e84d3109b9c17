package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// faultSpec is a spec of two command methods: alpha with fixed settings
// modeA, beta with modeB (an empty mode trains normally).
const faultSpec = `
out: runs
dataset: dir:data
seed: 0
search: random
budget: 2
folds: 2
fixed: {epochs: 2, embed-dim: 16}
final: {seeds: [0, 1]}
methods:
  - name: alpha
    command: [%[1]s]
    fixed: {mode: %[2]q}
    space:
      lr: {low: 1.0e-3, high: 1.0e-1, log: true}
  - name: beta
    command: [%[1]s]
    fixed: {mode: %[3]q}
    space:
      lr: {low: 1.0e-3, high: 1.0e-1, log: true}
`

func faultPlan(t *testing.T, modeA, modeB string) *Plan {
	t.Helper()
	dir := t.TempDir()
	commandData(t, filepath.Join(dir, "data"))
	path := filepath.Join(dir, "tune.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(faultSpec, fakeTrainer, modeA, modeB)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Spec: s, Out: s.OutDir("")}
}

// runRounds runs the plan's cells round after round, as `tune` does,
// until no cell is left (then Finish) or rounds run out; a cell that
// fails fails the test when strict, else the next round retries it. It
// returns, per round, the cells run.
func runRounds(t *testing.T, p *Plan, rounds int, strict bool) [][]string {
	t.Helper()
	var log [][]string
	for range rounds {
		cells, _, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) == 0 {
			if err := p.Finish(context.Background(), "test"); err != nil {
				t.Fatal(err)
			}
			return log
		}
		var names []string
		for _, i := range cells {
			dir, _ := p.CellDir(i)
			name, _ := filepath.Rel(p.Out, dir)
			names = append(names, name)
			if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil && strict {
				t.Fatalf("cell %s: %v", dir, err)
			}
		}
		log = append(log, names)
	}
	t.Fatalf("the plan did not finish in %d rounds; last round %v", rounds, log[len(log)-1])
	return nil
}

// TestFinalDivergenceLeavesSeedOut: a final cell that diverges (exit 3)
// is not run again; its seed is left out of the method's row, and the
// summary and the report's notes say so.
func TestFinalDivergenceLeavesSeedOut(t *testing.T) {
	p := faultPlan(t, "diverge-final", "")
	runRounds(t, p, 10, false)
	sum, err := ReadSummary(p.Out)
	if err != nil || !sum.Done {
		t.Fatalf("summary %v %+v", err, sum)
	}
	a := sum.Methods[0]
	if len(a.FinalFailed) != 2 || a.FinalFailed[0].Seed != 1 || !strings.Contains(a.FinalFailed[0].Reason, "diverged") {
		t.Fatalf("alpha's failed final cells %+v", a.FinalFailed)
	}
	for _, seed := range []string{"s0", "s1"} {
		_, errA := os.Stat(filepath.Join(ResultsDir(p.Out), "alpha", Separated, seed, trainers.RunFile))
		_, errB := os.Stat(filepath.Join(ResultsDir(p.Out), "beta", Separated, seed, trainers.RunFile))
		if (errA == nil) != (seed == "s0") || errB != nil {
			t.Errorf("seed %s: alpha's row %v, beta's %v", seed, errA, errB)
		}
	}
	notes := strings.Join(sum.Notes(p.Out), "\n")
	if !strings.Contains(notes, "alpha: final seed 1 left out (n = 1 of 2 seeds)") {
		t.Errorf("notes:\n%s", notes)
	}
	// Nothing is left to run: the diverged cells are not retried.
	if cells, _, _ := p.Next(); len(cells) != 0 {
		t.Errorf("cells to run after the divergence: %v", cells)
	}
}

// TestFailingMethodHoldsBackNoOther: a method whose command always fails
// gives up after cell.MaxFailures starts per cell, while the other
// method's final stage runs as soon as its own trials are done; the tune
// finishes, the failing method without a row and a note saying why.
func TestFailingMethodHoldsBackNoOther(t *testing.T) {
	p := faultPlan(t, "fail", "")
	log := runRounds(t, p, 40, false)
	finalBeta, alphaTuning := -1, -1
	for r, names := range log {
		for _, n := range names {
			if strings.HasPrefix(n, "final/beta") && finalBeta < 0 {
				finalBeta = r
			}
			if strings.HasPrefix(n, "trials/alpha") {
				alphaTuning = r
			}
		}
	}
	if finalBeta < 0 || finalBeta >= alphaTuning {
		t.Errorf("beta's final stage began in round %d, alpha's tuning ended in round %d", finalBeta, alphaTuning)
	}
	sum, err := ReadSummary(p.Out)
	if err != nil || !sum.Done || sum.Methods[0].Best != -1 || sum.Methods[1].Best < 0 {
		t.Fatalf("summary %v %+v", err, sum)
	}
	b, _ := os.ReadFile(filepath.Join(p.TrialDir(0, 0, 0), FailedFile))
	if !strings.Contains(string(b), "CUDA out of memory") || !strings.Contains(string(b), "given up") {
		t.Errorf("alpha's trial marked %q", b)
	}
	if notes := strings.Join(sum.Notes(p.Out), "\n"); !strings.Contains(notes, "alpha: no row") {
		t.Errorf("notes:\n%s", notes)
	}
}

// TestAllTrialsDivergedStillHasResults: a lone method whose trials all
// diverge finishes with an empty results directory and a note, not a
// results directory that is missing.
func TestAllTrialsDivergedStillHasResults(t *testing.T) {
	p := faultPlan(t, "diverge", "diverge")
	runRounds(t, p, 10, false)
	if st, err := os.Stat(ResultsDir(p.Out)); err != nil || !st.IsDir() {
		t.Fatalf("results: %v", err)
	}
	sum, _ := ReadSummary(p.Out)
	if notes := sum.Notes(p.Out); len(notes) != 2 || !strings.Contains(notes[0], "alpha: no row") {
		t.Errorf("notes %q", notes)
	}
}

// TestTrainerRemovingItsDirectory: a trainer that deletes its directory
// (and a cell.json in it) leaves the plan intact: every cell starts once
// and the tune finishes.
func TestTrainerRemovingItsDirectory(t *testing.T) {
	p := faultPlan(t, "rmtree", "")
	runRounds(t, p, 10, false)
	for tr := range p.Spec.Budget {
		for f := range p.Spec.Folds {
			if seen := readSeen(t, p.TrialDir(0, tr, f)); len(seen) != 1 {
				t.Errorf("%s: started %d times", p.TrialDir(0, tr, f), len(seen))
			}
		}
	}
}

// TestCategoricalValuesKeepTheirType: a command method's categorical
// values reach the trainer as the spec wrote them; a non-finite number
// is refused when the spec is read.
func TestCategoricalValuesKeepTheirType(t *testing.T) {
	spec := `dataset: dir:data
search: random
budget: 2
fixed: {epochs: 2}
methods:
  - name: a
    command: [python3, t.py]
    space:
      v: {values: [".inf", "a: b", "true", 8, "8x", 0.5]}
      w: {values: [true, "no"]}
`
	dir := t.TempDir()
	commandData(t, filepath.Join(dir, "data"))
	load := func(spec string) (*Spec, error) {
		path := filepath.Join(dir, "tune.yaml")
		if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(path, Options{})
	}
	s, err := load(spec)
	if err != nil {
		t.Fatal(err)
	}
	me := s.Methods[0]
	want := []any{".inf", "a: b", "true", 8, "8x", 0.5}
	for i, v := range me.Space[0].Values {
		c := Cell{Params: map[string]string{"v": v, "w": "true"}}
		s.commandCell(me, &c)
		// Through cell.json and the contract's JSON, as the trainer gets it.
		b, _ := json.Marshal(c)
		var back Cell
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(commandParams(&back)["v"])
		w, _ := json.Marshal(want[i])
		if string(got) != string(w) {
			t.Errorf("value %q reaches the trainer as %s, want %s", v, got, w)
		}
		if commandParams(&back)["w"] != true {
			t.Errorf("value true reaches the trainer as %#v", commandParams(&back)["w"])
		}
	}
	for _, bad := range []string{"[.inf, 1]", "[.nan]"} {
		_, err := load(strings.Replace(spec, `[".inf", "a: b", "true", 8, "8x", 0.5]`, bad, 1))
		if err == nil || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("values %s: %v", bad, err)
		}
	}
}

// TestDryRunDoesNotLock: a directory in which nothing has been produced
// (only proposed, as by --dry-run, or with every cell failed before
// training) takes a changed spec and starts over; once a cell has
// produced something, the change is refused.
func TestDryRunDoesNotLock(t *testing.T) {
	p := faultPlan(t, "", "")
	planned := func(p *Plan) []int {
		cells, _, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		sum, err := p.Summarize()
		if err != nil {
			t.Fatal(err)
		}
		if err := record.WriteAtomic(filepath.Join(p.Out, SummaryFile), sum); err != nil {
			t.Fatal(err)
		}
		return cells
	}
	cells := planned(p)
	edit := func(old, repl string) *Plan {
		b, _ := os.ReadFile(p.Spec.File)
		if err := os.WriteFile(p.Spec.File, []byte(strings.Replace(string(b), old, repl, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(p.Spec.File, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return &Plan{Spec: s, Out: p.Out}
	}
	p2 := edit("low: 1.0e-3", "low: 2.0e-3")
	ch, err := p2.CheckSpec()
	if err != nil || !ch.Restart {
		t.Fatalf("changed spec after a dry run: %+v, %v", ch, err)
	}
	if err := p2.Restart(); err != nil {
		t.Fatal(err)
	}
	// Every cell fails before training: a command not found.
	p2.Spec.Methods[0].Command = []string{"no-such-python-dmlbench"}
	p2.Spec.Methods[1].Command = p2.Spec.Methods[0].Command
	for _, i := range planned(p2) {
		dir, _ := p2.CellDir(i)
		if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err == nil {
			t.Fatal("a missing command ran")
		}
	}
	p3 := edit("budget: 2", "budget: 1")
	if ch, err := p3.CheckSpec(); err != nil || !ch.Restart {
		t.Fatalf("changed spec after failures before training: %+v, %v", ch, err)
	}
	p3.Restart()
	for _, i := range planned(p3)[:1] {
		dir, _ := p3.CellDir(i)
		if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	p4 := edit("low: 2.0e-3", "low: 3.0e-3")
	if _, err := p4.CheckSpec(); !errors.Is(err, ErrSpecChanged) {
		t.Errorf("changed spec after a finished cell: %v", err)
	}
	_ = cells
}

// TestEditedScriptRefused: the trainer's script (a file the command
// names inside the spec's directory; not its interpreter) is in the
// fingerprint: edited, a rerun is refused naming it, even with a larger
// budget, and a planned cell refuses to run it.
func TestEditedScriptRefused(t *testing.T) {
	p := faultPlan(t, "", "")
	script := filepath.Join(p.Spec.Dir, "train.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+fakeTrainer+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p.Spec.File)
	spec := strings.ReplaceAll(string(b), "command: ["+fakeTrainer+"]", "command: [/bin/sh, train.sh]")
	os.WriteFile(p.Spec.File, []byte(spec), 0o644)
	s, err := Load(p.Spec.File, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p = &Plan{Spec: s, Out: s.OutDir("")}
	fp := s.Fingerprint()
	if len(fp["file:train.sh"]) != 66 || fp["file:/bin/sh"] != "" {
		t.Fatalf("fingerprint %v", fp)
	}
	cells, _, _ := p.Next()
	sum, _ := p.Summarize()
	record.WriteAtomic(filepath.Join(p.Out, SummaryFile), sum)
	dir, _ := p.CellDir(cells[0])
	if err := RunCell(context.Background(), dir, nil, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	r, _ := record.Read(filepath.Join(dir, trainers.RunFile))
	var info struct{ Files map[string]string }
	json.Unmarshal(r.Config, &info)
	if len(info.Files) != 1 || info.Files["train.sh"] == "" {
		t.Errorf("run.json files %v", info.Files)
	}

	os.WriteFile(script, []byte("#!/bin/sh\n# faster\nexec "+fakeTrainer+"\n"), 0o755)
	os.WriteFile(p.Spec.File, []byte(strings.Replace(spec, "budget: 2", "budget: 3", 1)), 0o644)
	s2, err := Load(p.Spec.File, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Plan{Spec: s2, Out: p.Out}).CheckSpec()
	if !errors.Is(err, ErrSpecChanged) || !strings.Contains(err.Error(), "train.sh changed since") {
		t.Errorf("edited script with a larger budget: %v", err)
	}
	dir, _ = p.CellDir(cells[1])
	err = RunCell(context.Background(), dir, nil, CellOptions{Version: "test"})
	if err == nil || !strings.Contains(err.Error(), "train.sh changed since this cell was planned") {
		t.Errorf("planned cell with an edited script: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, cell.StartedFile)); err == nil {
		t.Error("the edited script was started")
	}
}

// TestRetry: `tune` goes on after failed cells only once a cell has
// finished in the run, and stops when a cell fails more often than a
// command may before it is given up (a failure that is not the command's).
func TestRetry(t *testing.T) {
	var r Retry
	if r.Again(nil, []string{"a", "b"}) {
		t.Error("a first round of failures only goes on")
	}
	if !r.Again([]string{"c"}, []string{"a"}) {
		t.Error("a round with a finished cell stops")
	}
	for i := 2; i <= cell.MaxFailures; i++ {
		if !r.Again(nil, []string{"a"}) {
			t.Fatalf("failure %d of a stops the run", i)
		}
	}
	if r.Again(nil, []string{"a"}) {
		t.Errorf("a cell failing %d times in one run goes on", cell.MaxFailures+1)
	}
}
