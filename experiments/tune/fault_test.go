package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// planOf writes spec into dir and loads it (without the data checks: the
// tests train on tinyData, not the spec's data set).
func planOf(t *testing.T, dir, spec string) *Plan {
	t.Helper()
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, Options{NoData: true})
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Spec: s, Out: s.OutDir("")}
}

func firstCell(t *testing.T, p *Plan) string {
	t.Helper()
	if _, _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	dir, _ := p.CellDir(0)
	return dir
}

func failed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, FailedFile))
	return err == nil
}

// An error that is not the configuration's (here a run.json that cannot
// be written, as on a full disk; or a lock held by another process) fails
// the cell, not the trial: the next run retries it and it finishes.
func TestAccidentFailsCellNotTrial(t *testing.T) {
	data := tinyData(t)
	p := tinyPlan(t, t.TempDir())
	dir := firstCell(t, p)
	blocker := filepath.Join(dir, trainers.RunFile)
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"})
	if err == nil || TrialFailed(err) || failed(dir) {
		t.Fatalf("unwritable run.json: error %v, trial failed %v", err, failed(dir))
	}
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	lock, err := trainers.LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = RunCell(context.Background(), dir, data, CellOptions{Version: "test"})
	lock.Release()
	if err == nil || failed(dir) {
		t.Fatalf("locked directory: error %v, trial failed %v", err, failed(dir))
	}
	if cells, _, _ := p.Next(); !containsInt(cells, 0) {
		t.Fatalf("the failed cell is not run again: next cells %v", cells)
	}
	if err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(filepath.Join(dir, trainers.RunFile))
	if err != nil || r.Status != "done" {
		t.Fatalf("retried cell: %v, %+v", err, r)
	}
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// A configuration's own failure (here a batch larger than the fold's
// training rows, a setting the trainer refuses) finishes the trial with
// the worst score; divergence is classified the same way.
func TestConfigurationFailureFailsTrial(t *testing.T) {
	data := tinyData(t)
	p := tinyPlan(t, t.TempDir())
	dir := firstCell(t, p)
	c, err := ReadCell(dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Config.BatchSize = 10000
	if err := writeCell(dir, c); err != nil {
		t.Fatal(err)
	}
	if err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"}); err == nil || !TrialFailed(err) || !failed(dir) {
		t.Fatalf("batch 10000: error %v, trial failed %v", err, failed(dir))
	}
	for _, err := range []error{
		fmt.Errorf("epoch 1 step 2: loss margin is NaN (%w)", trainers.ErrDiverged),
		fmt.Errorf("evaluate validation split (epoch 1): %w", ErrNonFinite),
		&trainers.ConfigError{Err: errors.New("batch-size 9 exceeds")},
	} {
		if !TrialFailed(err) {
			t.Errorf("%v: not a trial failure", err)
		}
	}
	for _, err := range []error{
		errors.New("write run.json: no space left on device"),
		fmt.Errorf("resume: checkpoint x is damaged: %w", trainers.ErrCorruptCheckpoint),
		trainers.ErrInterrupted,
	} {
		if TrialFailed(err) {
			t.Errorf("%v: classified as the trial's failure", err)
		}
	}
	emb := mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{1, 0, float32(math.NaN()), 0}}
	_, err = finiteEval(func(context.Context, mat32.Matrix, []int32) (record.Metrics, error) { return nil, nil })(context.Background(), emb, []int32{0, 1})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("NaN embedding: %v", err)
	}
}

// A damaged checkpoint starts its cell over with a warning, and the cell
// ends as an uninterrupted one.
func TestDamagedCheckpointRestartsCell(t *testing.T) {
	data := tinyData(t)
	a, b := tinyPlan(t, t.TempDir()), tinyPlan(t, t.TempDir())
	da, db := firstCell(t, a), firstCell(t, b)
	if err := RunCell(context.Background(), da, data, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	afterEpoch = func(dir string, r *record.Run) {
		if len(r.History) == 2 {
			cancel()
		}
	}
	err := RunCell(ctx, db, data, CellOptions{Version: "test"})
	afterEpoch = nil
	if err == nil {
		t.Fatal("cancelled cell: no error")
	}
	ck := filepath.Join(db, trainers.CheckpointFile)
	raw, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(ck, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	if err := RunCell(context.Background(), db, data, CellOptions{Resume: true, Version: "test", Warn: &warn}); err != nil {
		t.Fatalf("damaged checkpoint: %v", err)
	}
	if !strings.Contains(warn.String(), "damaged") || !strings.Contains(warn.String(), "starting the cell over") {
		t.Fatalf("warning %q", warn.String())
	}
	ra, _ := record.Read(filepath.Join(da, trainers.RunFile))
	rb, _ := record.Read(filepath.Join(db, trainers.RunFile))
	if rb.Status != "done" || len(ra.History) != len(rb.History) {
		t.Fatalf("restarted cell: status %s, %d epochs (want %d)", rb.Status, len(rb.History), len(ra.History))
	}
	for i := range ra.History {
		if !reflect.DeepEqual(ra.History[i].Metrics, rb.History[i].Metrics) {
			t.Fatalf("epoch %d differs from an uninterrupted cell", i)
		}
	}
}

// A lower-is-better objective keeps its sign in fold scores, trial
// scores and the best-so-far curve; the best trial has the lowest score.
func TestLowerIsBetterKeepsSign(t *testing.T) {
	r := &record.Run{History: []record.Epoch{
		{Epoch: 1, Metrics: record.Metrics{"rho": 0.05}},
		{Epoch: 2, Metrics: record.Metrics{"rho": 0.036}},
		{Epoch: 3, Metrics: record.Metrics{"rho": 0.04}},
	}}
	key := "rho"
	if !(&Spec{Objective: key}).lowerIsBetter() {
		t.Fatalf("%s is not a lower-is-better metric", key)
	}
	sc, ep, ok := FoldScore(r, key)
	if !ok || sc != 0.036 || ep != 2 {
		t.Fatalf("fold score %v at epoch %d (ok %v), want 0.036 at 2", sc, ep, ok)
	}
	trials := []Trial{{Index: 0, Done: true, Score: 0.05}, {Index: 1, Done: true, Score: Value(math.NaN())}, {Index: 2, Done: true, Score: 0.036}, {Index: 3, Done: true, Score: 0.04}}
	if b, ok := Best(trials, true); !ok || b.Index != 2 {
		t.Fatalf("best %+v", b)
	}
	if b, _ := Best(trials, false); b.Index != 0 {
		t.Fatalf("higher is better: best %+v", b)
	}
	want := []float64{0.05, 0.05, 0.036, 0.036}
	if got := BestSoFar(trials, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("best so far %v, want %v", got, want)
	}
}

// One method whose every trial fails does not block the others: they
// finish their final stage; it has no results and its best is −1.
func TestMethodWithoutSuccessfulTrial(t *testing.T) {
	data := tinyData(t)
	p := tinyPlan(t, t.TempDir())
	for {
		cells, stage, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) == 0 {
			break
		}
		for _, n := range cells {
			dir, _ := p.CellDir(n)
			if stage == StageTune && strings.Contains(dir, "contrastive") {
				if err := os.WriteFile(filepath.Join(dir, FailedFile), []byte("diverged\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Finish(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	sum, err := ReadSummary(p.Out)
	if err != nil || !sum.Done {
		t.Fatalf("summary: %v", err)
	}
	if sum.Methods[0].Best < 0 || sum.Methods[1].Best != -1 {
		t.Fatalf("best trials %d, %d", sum.Methods[0].Best, sum.Methods[1].Best)
	}
	if _, err := os.Stat(filepath.Join(ResultsDir(p.Out), "margin", Separated, "s0", trainers.RunFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ResultsDir(p.Out), "contrastive")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("results of the failed method: %v", err)
	}
}

// A feature directory's tuning cells read its train files only: they run
// with the test files unreadable.
func TestDirDatasetTuningNeverOpensTestFiles(t *testing.T) {
	ds, err := fixtures.Load("synthetic", fixtures.Options{Classes: 16, PerClass: 8, Dim: 6, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	fdir := t.TempDir()
	if err := arrays.SaveNPY(filepath.Join(fdir, fixtures.TrainEmbFile), ds.Train.X); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(filepath.Join(fdir, fixtures.TrainLabelsFile), ds.Train.Labels); err != nil {
		t.Fatal(err)
	}
	// Unreadable even for root: not a file at all.
	for _, f := range []string{fixtures.TestEmbFile, fixtures.TestLabelsFile} {
		if err := os.MkdirAll(filepath.Join(fdir, f, "unreadable"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := strings.Replace(tinySpec, "dataset: synthetic", "dataset: dir:"+fdir, 1)
	p := planOf(t, t.TempDir(), spec)
	dir := firstCell(t, p)
	c, _ := ReadCell(dir)
	if err := RunCell(context.Background(), dir, LoadData(c.Config), CellOptions{Version: "test"}); err != nil {
		t.Fatalf("tuning cell of a dir: data set: %v", err)
	}
	if _, err := LoadData(c.Config).TestClasses(); err == nil {
		t.Fatal("the test files are readable after all; the test proves nothing")
	}
}

// The concatenated row L2-normalises each fold model's rows first.
func TestUnitRows(t *testing.T) {
	m := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{3, 4, 0, 0, -2, 0}}
	got := UnitRows(m).Data
	want := []float32{0.6, 0.8, 0, 0, -1, 0}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-7 {
			t.Fatalf("UnitRows = %v, want %v", got, want)
		}
	}
	if m.Data[0] != 3 {
		t.Fatal("UnitRows changed its input")
	}
	j := ConcatColumns([]mat32.Matrix{UnitRows(m), UnitRows(mat32.Matrix{Rows: 3, Cols: 1, Data: []float32{5, -1, 0}})})
	if j.Cols != 3 || j.Data[2] != 1 || j.Data[5] != -1 || j.Data[8] != 0 {
		t.Fatalf("joined %v", j.Data)
	}
}

// extSpec is tinySpec with a budget of b and the final seeds seeds.
func extSpec(b int, seeds string) string {
	s := strings.Replace(tinySpec, "budget: 4", fmt.Sprintf("budget: %d", b), 1)
	s = strings.Replace(s, "tpe: {startup: 2}", "tpe: {startup: 1}", 1)
	return strings.Replace(s, "seeds: [0, 1]", "seeds: "+seeds, 1)
}

// resultsOf reads tune.json (without the spec's path) and every results
// run.json of a finished tune directory.
func resultsOf(t *testing.T, p *Plan) (Summary, map[string]string) {
	t.Helper()
	sum, err := ReadSummary(p.Out)
	if err != nil {
		t.Fatal(err)
	}
	sum.Spec = ""
	files := map[string]string{}
	err = filepath.Walk(ResultsDir(p.Out), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(p.Out, path)
			files[rel] = string(b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return *sum, files
}

// A finished (or killed) tune whose spec is then extended — a larger
// budget, more final seeds — does the added work and ends equal to a run
// of the new spec from scratch; other edits are refused naming the keys.
func TestSpecExtensionEqualsFromScratch(t *testing.T) {
	data := tinyData(t)
	dir := t.TempDir()
	small := planOf(t, dir, extSpec(3, "[0]"))
	runAll(t, small, data)
	big := planOf(t, dir, extSpec(6, "[0, 1]"))
	ch, err := big.CheckSpec()
	if err != nil || !ch.Extended || strings.Join(ch.Keys, ",") != "budget,final.seeds" {
		t.Fatalf("extension: %+v, %v", ch, err)
	}
	if done, err := big.Finished(); done || err != nil {
		t.Fatalf("extended spec: finished %v, %v", done, err)
	}
	runAll(t, big, data)
	fresh := planOf(t, t.TempDir(), extSpec(6, "[0, 1]"))
	runAll(t, fresh, data)
	sa, fa := resultsOf(t, big)
	sb, fb := resultsOf(t, fresh)
	if !reflect.DeepEqual(sa, sb) {
		t.Fatal("tune.json of the extended run differs from a run from scratch")
	}
	if !reflect.DeepEqual(fa, fb) || len(fa) != 8 {
		t.Fatalf("results differ from a run from scratch (%d and %d files)", len(fa), len(fb))
	}
	// Other changes are refused, by tune and status alike (CheckSpec and
	// Finished), naming the keys.
	changed := planOf(t, dir, strings.Replace(extSpec(6, "[0, 1]"), "margin: {low: 0.05, high: 0.5}", "margin: {low: 0.05, high: 0.6}", 1))
	if _, err := changed.CheckSpec(); !errors.Is(err, ErrSpecChanged) || !strings.Contains(err.Error(), "(methods.margin)") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("changed space: %v", err)
	}
	if _, err := changed.Finished(); err == nil {
		t.Fatal("Finished accepts a changed spec")
	}
	shrunk := planOf(t, dir, extSpec(3, "[0, 1]"))
	if _, err := shrunk.CheckSpec(); err == nil || !strings.Contains(err.Error(), "(budget)") {
		t.Fatalf("smaller budget: %v", err)
	}
}

// A done final cell whose test embeddings are gone runs again.
func TestMissingFinalEmbeddingRedoesCell(t *testing.T) {
	data := tinyData(t)
	p := planOf(t, t.TempDir(), extSpec(2, "[0]"))
	runAll(t, p, data)
	dir, _ := p.CellDir(p.tuneCells())
	if err := os.Remove(filepath.Join(dir, TestEmbFile)); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	p.Warn = &warn
	cells, stage, err := p.Next()
	if err != nil || stage != StageFinal || len(cells) != 1 || cells[0] != p.tuneCells() {
		t.Fatalf("next: %v %s %v", cells, stage, err)
	}
	if !strings.Contains(warn.String(), "missing") {
		t.Fatalf("warning %q", warn.String())
	}
	if err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, TestEmbFile)); err != nil {
		t.Fatal(err)
	}
}

// A cell whose objective no epoch holds fails the cell, not the trial.
func TestObjectiveNotComputedFailsCell(t *testing.T) {
	data := tinyData(t)
	p := tinyPlan(t, t.TempDir())
	dir := firstCell(t, p)
	c, _ := ReadCell(dir)
	c.Objective = "R@1" // the cell evaluates MAP@R only
	if err := writeCell(dir, c); err != nil {
		t.Fatal(err)
	}
	err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"})
	if err == nil || TrialFailed(err) || failed(dir) || !strings.Contains(err.Error(), "objective R@1") {
		t.Fatalf("error %v, trial failed %v", err, failed(dir))
	}
	if r, _ := record.Read(filepath.Join(dir, trainers.RunFile)); r.Status != "failed" {
		t.Fatalf("run.json status %q", r.Status)
	}
}

// The concatenated row joins the fold models' embeddings L2-normalised:
// scaling one model's test embeddings leaves it unchanged, while the raw
// join (final.join: raw) lets that model dominate the distances.
func TestConcatenatedRowJoinsNormalised(t *testing.T) {
	data := tinyData(t)
	p := planOf(t, t.TempDir(), extSpec(2, "[0]"))
	runAll(t, p, data)
	_, before, _, err := p.finalMetrics(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.FinalDir(0, 0, 0), TestEmbFile)
	emb, err := arrays.LoadEmbeddings(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range emb.Data {
		emb.Data[i] *= 1000
	}
	if err := arrays.SaveNPY(path, emb); err != nil {
		t.Fatal(err)
	}
	_, after, _, err := p.finalMetrics(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("l2 join changed with the scale of one model: %v vs %v", before, after)
	}
	p.Spec.Join = JoinRaw
	_, raw, _, err := p.finalMetrics(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(raw, after) {
		t.Fatalf("raw join of a scaled model equals the l2 join: %v", raw)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := p.finalMetrics(context.Background(), 0, 0); err == nil || !strings.Contains(err.Error(), "run tune again") {
		t.Fatalf("missing embeddings: %v", err)
	}
}
