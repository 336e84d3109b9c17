package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
// extends it is accepted by tune and status alike; any other is refused
// by both in one line naming the key. A budget of 10⁹ is refused at once.
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
