package tune

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

func TestFoldsAreClassDisjointAndCover(t *testing.T) {
	ds, err := fixtures.Load("synthetic", fixtures.Options{Classes: 22, PerClass: 5, Dim: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := DatasetData(ds).TrainingClasses()
	const k = 4
	seen := map[string]int{}
	for f := range k {
		train, val, err := FoldSplit(tc, f, k)
		if err != nil {
			t.Fatal(err)
		}
		inVal := map[string]bool{}
		for _, n := range val.ClassNames {
			inVal[n] = true
			seen[n]++
		}
		for _, n := range train.ClassNames {
			if inVal[n] {
				t.Fatalf("fold %d: class %s is in both the training and the validation split", f, n)
			}
		}
		if train.NumClasses()+val.NumClasses() != tc.Split.NumClasses() || train.X.Rows+val.X.Rows != tc.Split.X.Rows {
			t.Fatalf("fold %d: %d+%d classes, %d+%d rows; want %d classes, %d rows", f, train.NumClasses(), val.NumClasses(),
				train.X.Rows, val.X.Rows, tc.Split.NumClasses(), tc.Split.X.Rows)
		}
		if n := val.NumClasses(); n < tc.Split.NumClasses()/k || n > tc.Split.NumClasses()/k+1 {
			t.Fatalf("fold %d has %d classes", f, n)
		}
	}
	for _, n := range tc.Split.ClassNames {
		if seen[n] != 1 {
			t.Fatalf("training class %s is validated %d times, want once", n, seen[n])
		}
	}
	if _, err := FoldClasses(3, 4); err == nil {
		t.Fatal("3 classes in 4 folds: no error")
	}
}

// spyData serves a synthetic data set and records reads of its test classes.
type spyData struct {
	Data
	testReads int
}

func (s *spyData) TestClasses() (fixtures.Split, error) {
	s.testReads++
	return s.Data.TestClasses()
}

const tinySpec = `
out: out
dataset: synthetic
seed: 3
budget: 4
max-parallel: 2
tpe: {startup: 2}
folds: 2
fixed: {epochs: 3, batch-size: 16, hidden: [16], embed-dim: 8}
final: {seeds: [0, 1], metrics: [R@1, MAP@R]}
methods:
  - name: margin
    loss: margin
    miner: distance
    space:
      lr: {low: 1.0e-4, high: 1.0e-2, log: true}
      margin: {low: 0.05, high: 0.5}
  - name: contrastive
    loss: contrastive
    miner: distance
    space:
      lr: {low: 1.0e-4, high: 1.0e-2, log: true}
      miner: {values: [distance, semihard]}
`

func tinyPlan(t *testing.T, dir string) *Plan {
	t.Helper()
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Spec: s, Out: s.OutDir("")}
}

func tinyData(t *testing.T) Data {
	t.Helper()
	ds, err := fixtures.Load("synthetic", fixtures.Options{Classes: 16, PerClass: 8, Dim: 6, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	return DatasetData(ds)
}

// runAll runs every cell in process until the plan is finished.
func runAll(t *testing.T, p *Plan, data Data) {
	t.Helper()
	for {
		cells, _, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) == 0 {
			break
		}
		for _, n := range cells {
			dir, _ := p.CellDir(n)
			if err := RunCell(context.Background(), dir, data, CellOptions{Resume: false, Version: "test"}); err != nil {
				t.Fatalf("cell %s: %v", dir, err)
			}
		}
	}
	if err := p.Finish(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
}

// The tuning stage never reads the test classes; the final stage does, and
// every run.json names the split it was scored on.
func TestTuningNeverReadsTestClasses(t *testing.T) {
	p := tinyPlan(t, t.TempDir())
	spy := &spyData{Data: tinyData(t)}
	for {
		cells, stage, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if stage != StageTune {
			break
		}
		for _, n := range cells {
			dir, _ := p.CellDir(n)
			if err := RunCell(context.Background(), dir, spy, CellOptions{Resume: false, Version: "test"}); err != nil {
				t.Fatal(err)
			}
			r, err := record.Read(filepath.Join(dir, trainers.RunFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.Method["eval_split"], "validation fold") {
				t.Fatalf("%s: eval_split %q", dir, r.Method["eval_split"])
			}
		}
	}
	if spy.testReads != 0 {
		t.Fatalf("the tuning stage read the test classes %d times", spy.testReads)
	}
	dir, _ := p.CellDir(p.tuneCells())
	if err := RunCell(context.Background(), dir, spy, CellOptions{Resume: false, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	r, _ := record.Read(filepath.Join(dir, trainers.RunFile))
	if spy.testReads != 1 || r.Method["eval_split"] != "test classes" {
		t.Fatalf("final cell: %d test reads, eval_split %q", spy.testReads, r.Method["eval_split"])
	}
}

// Same spec and seed → the same trials and results; a second Finish does
// nothing; the results hold both variants for every method and seed.
func TestSameSeedSameTrialsAndResults(t *testing.T) {
	data := tinyData(t)
	a, b := tinyPlan(t, t.TempDir()), tinyPlan(t, t.TempDir())
	runAll(t, a, data)
	runAll(t, b, data)
	sa, err := ReadSummary(a.Out)
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := ReadSummary(b.Out)
	sa.Spec, sb.Spec = "", ""
	if !reflect.DeepEqual(sa, sb) {
		t.Fatal("two runs of one spec differ in tune.json")
	}
	for _, m := range sa.Methods {
		if len(m.Trials) != 4 || m.Best < 0 {
			t.Fatalf("%s: %d trials, best %d", m.Name, len(m.Trials), m.Best)
		}
		for _, v := range []string{Separated, Concatenated} {
			for _, s := range []string{"s0", "s1"} {
				ra, err := os.ReadFile(filepath.Join(ResultsDir(a.Out), m.Name, v, s, trainers.RunFile))
				if err != nil {
					t.Fatal(err)
				}
				rb, _ := os.ReadFile(filepath.Join(ResultsDir(b.Out), m.Name, v, s, trainers.RunFile))
				if string(ra) != string(rb) {
					t.Fatalf("%s %s %s differs between two runs", m.Name, v, s)
				}
			}
		}
	}
	cells, _, err := a.Next()
	if err != nil || len(cells) != 0 {
		t.Fatalf("finished plan: Next gives %v, %v", cells, err)
	}
}

// A cell interrupted after an epoch and resumed from its checkpoint ends
// with the run.json of an uninterrupted cell.
func TestResumeAfterInterruptedCell(t *testing.T) {
	data := tinyData(t)
	a, b := tinyPlan(t, t.TempDir()), tinyPlan(t, t.TempDir())
	if _, _, err := a.Next(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Next(); err != nil {
		t.Fatal(err)
	}
	da, _ := a.CellDir(1)
	db, _ := b.CellDir(1)
	if err := RunCell(context.Background(), da, data, CellOptions{Resume: false, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	afterEpoch = func(dir string, r *record.Run) {
		if len(r.History) == 1 {
			cancel()
		}
	}
	err := RunCell(ctx, db, data, CellOptions{Resume: false, Version: "test"})
	afterEpoch = nil
	if err == nil {
		t.Fatal("cancelled cell: no error")
	}
	if _, err := os.Stat(filepath.Join(db, trainers.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint after the interruption: %v", err)
	}
	if err := RunCell(context.Background(), db, data, CellOptions{Resume: true, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	ra, _ := record.Read(filepath.Join(da, trainers.RunFile))
	rb, _ := record.Read(filepath.Join(db, trainers.RunFile))
	ha, _ := json.Marshal(ra.History)
	hb, _ := json.Marshal(rb.History)
	strip := func(b []byte) string { // seconds differ
		var h []record.Epoch
		_ = json.Unmarshal(b, &h)
		for i := range h {
			h[i].Seconds = 0
		}
		out, _ := json.Marshal(h)
		return string(out)
	}
	if rb.Status != "done" || strip(ha) != strip(hb) {
		t.Fatalf("resumed cell differs:\n%s\n%s", strip(ha), strip(hb))
	}
}

func TestSpecErrorsAreOneLine(t *testing.T) {
	base := func(methods string) string {
		return "dataset: synthetic\nsearch: random\nbudget: 4\nmethods:\n" + methods
	}
	for _, c := range []struct{ spec, want string }{
		{"dataset: synthetic\nbudgett: 4\nmethods: [{loss: margin, space: {lr: {low: 0.001, high: 0.01}}}]\n", `unknown key "budgett"; did you mean "budget"?`},
		{base("  - {loss: margin, space: {lr: {low: 0.01, high: 0.01}}}\n"), "empty range"},
		{base("  - {loss: margin, space: {lr: {low: 0.1, high: 0.01}}}\n"), "low 0.1 > high 0.01"},
		{base("  - {loss: margin, space: {lr: {low: 0, high: 0.01, log: true}}}\n"), "log range [0, 0.01] must lie above 0"},
		{base("  - {loss: margin, space: {lr: {values: []}}}\n"), "empty values list"},
		{base("  - {loss: margin, space: {marginn: {low: 0.1, high: 0.3}}}\n"), `did you mean "margin"?`},
		{base("  - {loss: margin, space: {lr: {low: 0.001, high: 0.01, logg: true}}}\n"), `did you mean "log"?`},
		{base("  - {loss: margin, budget: 4, space: {lr: {low: 0.001, high: 0.01}}}\n  - {loss: triplet, budget: 8, space: {lr: {low: 0.001, high: 0.01}}}\n"), "unequal budgets"},
		{"dataset: synthetic\nsearch: random\nmethods:\n  - {loss: margin, budget: 4, space: {lr: {low: 0.001, high: 0.01}}}\n  - {loss: triplet, budget: 6, space: {lr: {low: 0.001, high: 0.01}}}\n", "unequal budgets"},
		{base("  - {loss: margin, space: {seed: {low: 0, high: 9}}}\n"), "cannot be searched"},
		{base("  - {loss: nosuchloss, space: {lr: {low: 0.001, high: 0.01}}}\n"), "unknown loss"},
		{"dataset: synthetic\nsearch: random\nbudget: 4\nobjective: MAP@Q\nmethods: [{loss: margin, space: {lr: {low: 0.001, high: 0.01}}}]\n", "is not a metric"},
		{"dataset: synthetic\nsearch: random\nbudget: 4\nfolds: 1\nmethods: [{loss: margin, space: {lr: {low: 0.001, high: 0.01}}}]\n", "folds = 1"},
		{"dataset: synthetic\nmethods: [{loss: margin, space: {lr: {low: 0.001, high: 0.01}}}]\n", "budget = 0"},
		{"", "empty"},
	} {
		_, err := Parse([]byte(c.spec), Options{})
		if err == nil {
			t.Errorf("%q: no error, want %q", c.spec, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || (!strings.Contains(c.spec, "budgett") && strings.Contains(err.Error(), "\n")) {
			t.Errorf("%q:\nerror %q\nwant one line containing %q", c.spec, err, c.want)
		}
	}
	s, err := Parse([]byte(base("  - {loss: margin, budget: 4, space: {lr: {low: 0.001, high: 0.01, log: true}, margin: {low: 0.1, high: 0.3}}}\n")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Folds != DefaultFolds || s.Objective != DefaultObjective || s.Budget != 4 {
		t.Fatalf("defaults: folds %d objective %s budget %d", s.Folds, s.Objective, s.Budget)
	}
	cfg, err := s.Config(s.Methods[0], []float64{0.005, 0.25}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LR != 0.005 || cfg.Hyper["margin"] != 0.25 || cfg.Seed != 7 || cfg.Loss != "margin" {
		t.Fatalf("config %+v", cfg)
	}
}

func TestSlurmScripts(t *testing.T) {
	c := &suite.SlurmConfig{Partition: "cpu", Time: "01:00:00", CPUsPerTask: 2, MaxParallel: 5, Extra: suite.List{"--qos=low"}}
	s := ArrayScript(c, "/b/dmlbench", "/s/t.yaml", "/o", []int{0, 1, 2, 7})
	for _, want := range []string{"#SBATCH --array=0-2,7%5\n", "#SBATCH --partition=cpu\n", "#SBATCH --time=01:00:00\n",
		"#SBATCH --cpus-per-task=2\n", "#SBATCH --qos=low\n", "#SBATCH --output=/o/slurm/logs/cell%a_job%A.out\n",
		"exec /b/dmlbench tune /s/t.yaml --out /o --cell \"$SLURM_ARRAY_TASK_ID\"\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("array script lacks %q:\n%s", want, s)
		}
	}
	n := NextScript(c, "/b/dmlbench", "/s/t.yaml", "/o", "42")
	for _, want := range []string{"#SBATCH --dependency=afterany:42\n", "exec /b/dmlbench tune /s/t.yaml --out /o --executor slurm\n"} {
		if !strings.Contains(n, want) {
			t.Errorf("follow-up script lacks %q:\n%s", want, n)
		}
	}
}
