package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/tune"
)

func TestTuneCLI(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(spec, []byte("out: out\ndataset: synthetic\nsearch: random\nbudget: 2\nfolds: 2\nfixed: {epochs: 1, batch-size: 32}\nmethods:\n  - {loss: margin, miner: distance, space: {lr: {low: 0.0001, high: 0.01, log: true}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// --dry-run writes the cells of the first batch and lists them.
	out, errs, code := runCLI(t, "tune", spec, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errs)
	}
	dirs := regexp.MustCompile(`tune cell (\S+)`).FindAllStringSubmatch(out, -1)
	if len(dirs) != 2 {
		t.Fatalf("dry run lists %d cells, want 2 (1 trial × 2 folds):\n%s", len(dirs), out)
	}
	// A cell runs in process and records the split it was scored on.
	if _, errs, code := runCLI(t, "tune", "cell", dirs[0][1], "--quiet"); code != 0 {
		t.Fatalf("tune cell: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0][1], "run.json"))
	if err != nil || !strings.Contains(string(b), `"eval_split": "validation fold 1/2 of the training classes"`) {
		t.Fatalf("run.json: %v\n%s", err, b)
	}
	out, errs, code = runCLI(t, "tune", "status", spec)
	if code != 0 || !strings.Contains(out, "0/2 trials done") || !strings.Contains(out, "1 done") {
		t.Fatalf("status: exit %d: %s\n%s", code, errs, out)
	}
	// --executor slurm --dry-run writes the array script over the cells
	// that can run now (the unfinished one) and submits nothing.
	_, errs, code = runCLI(t, "tune", spec, "--executor", "slurm", "--dry-run")
	sb, err := os.ReadFile(filepath.Join(dir, "out", "slurm", "tune-cells.sbatch"))
	if code != 0 || err != nil || !strings.Contains(errs, "tune: 1 tune cells to submit; wrote ") || !strings.Contains(string(sb), "#SBATCH --array=1") {
		t.Fatalf("slurm dry run: exit %d, %v: %s\n%s", code, err, errs, sb)
	}
	// Errors: one line, exit 1 for a bad spec, 2 for a bad invocation.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("dataset: synthetic\nsearch: random\nbudget: 2\nmethods:\n  - {loss: margin, space: {lr: {low: 0.01, high: 0.001}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = runCLI(t, "tune", bad)
	if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "low 0.01 > high 0.001") {
		t.Fatalf("bad spec: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{{"tune"}, {"tune", spec, "--parallel", "0"}, {"tune", spec, "--executor", "pbs"}, {"tune", spec, "--cell", "99"}} {
		if _, errs, code := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errs)
		}
	}
	// A tune directory whose final stage has not run has no table yet.
	if _, errs, code := runCLI(t, "report", filepath.Join(dir, "out")); code != 1 || !strings.Contains(errs, "has not finished") {
		t.Fatalf("report on an unfinished tune: exit %d: %s", code, errs)
	}
}

// A spec edited after its directory was started: a change that only
// extends it is accepted by tune and status alike; any other is taken
// while nothing has been produced (after a dry run) and refused by both
// once a cell has run, in one line naming the key. A budget of 10⁹ is refused at once.
func TestTuneSpecChangesAndLimits(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "t.yaml")
	base := "out: out\ndataset: synthetic\nsearch: random\nbudget: 2\nfolds: 2\nfixed: {epochs: 1, batch-size: 32}\nmethods:\n  - {loss: margin, miner: distance, space: {lr: {low: 0.0001, high: 0.01, log: true}}}\n"
	write := func(s string) {
		if err := os.WriteFile(spec, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(base)
	if _, errs, code := runCLI(t, "tune", spec, "--dry-run"); code != 0 {
		t.Fatalf("dry run: %s", errs)
	}
	write(strings.Replace(base, "budget: 2", "budget: 3", 1))
	out, errs, code := runCLI(t, "tune", "status", spec)
	if code != 0 || !strings.Contains(out, "the spec extends the directory (budget)") {
		t.Fatalf("extended: exit %d: %s\n%s", code, errs, out)
	}
	// Nothing has run yet: a dry run does not lock the directory.
	write(strings.Replace(base, "high: 0.01", "high: 0.02", 1))
	if out, errs, code := runCLI(t, "tune", "status", spec); code != 0 || !strings.Contains(out, "starts the directory over") {
		t.Fatalf("changed space after a dry run: exit %d: %s\n%s", code, errs, out)
	}
	write(base)
	if _, errs, code := runCLI(t, "tune", "cell", filepath.Join(dir, "out", "trials", "margin-distance", "t000", "f0"), "--quiet"); code != 0 {
		t.Fatalf("cell 0: %s", errs)
	}
	write(strings.Replace(base, "high: 0.01", "high: 0.02", 1))
	for _, args := range [][]string{{"tune", spec}, {"tune", "status", spec}} {
		_, errs, code := runCLI(t, args...)
		if code != 1 || !strings.Contains(errs, "spec changed since") || !strings.Contains(errs, "(methods.margin-distance)") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v after a changed space: exit %d, %q", args, code, errs)
		}
	}
	write(strings.Replace(base, "budget: 2", "budget: 1e9", 1))
	for _, args := range [][]string{{"tune", "status", spec}, {"tune", spec, "--dry-run"}} {
		_, errs, code := runCLI(t, args...)
		if code != 1 || !strings.Contains(errs, "more than the limit 100000") {
			t.Errorf("%v with budget 1e9: exit %d, %q", args, code, errs)
		}
	}
}

// The report of a tune directory says which method has no row (no
// successful trial) and, with search repeats, whether each rank holds.
func TestTuneReportNotes(t *testing.T) {
	dir := t.TempDir()
	yes, no := true, false
	sum := tune.Summary{Dataset: "synthetic", Search: "tpe", Objective: "MAP@R", Budget: 4, Folds: 2, Seeds: []int64{0}, Done: true, SearchRepeats: 2, Join: tune.JoinL2,
		Methods: []tune.MethodSummary{
			{Name: "margin", Loss: "margin", Best: 1, BestScore: 0.3, BestParams: map[string]string{"lr": "0.001"}, RepeatRanks: []int{1, 1}, RankHolds: &yes},
			{Name: "npair", Loss: "npair", Best: -1, BestScore: tune.Value(math.NaN()), RepeatRanks: []int{2, 2}, RankHolds: &yes},
			{Name: "triplet", Loss: "triplet", Best: 0, BestScore: 0.2, RepeatRanks: []int{3, 1}, RankHolds: &no},
		}}
	b, _ := json.Marshal(sum)
	if err := os.WriteFile(filepath.Join(dir, tune.SummaryFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"margin", "triplet"} {
		rd := filepath.Join(tune.ResultsDir(dir), m, tune.Separated, "s0")
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		run := `{"schema": 1, "dataset": "synthetic", "method": {"method": "` + m + `", "embedding": "separated"}, "seed": 0, "status": "done", "final": {"R@1": 0.5}}`
		if err := os.WriteFile(filepath.Join(rd, "run.json"), []byte(run), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := runCLI(t, "report", dir, "--format", "markdown")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	for _, want := range []string{"npair: no row: none of its 4 tpe trials trained successfully",
		"rank by best validation MAP@R in each of 2 searches with different search seeds: margin 1, 1 (holds); npair 2, 2 (holds); triplet 3, 1 (does not hold)",
		"each L2-normalised"} {
		if !strings.Contains(strings.ReplaceAll(out, `\_`, "_"), want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
