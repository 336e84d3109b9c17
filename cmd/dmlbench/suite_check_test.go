package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each bad suite file of a new user's first hour is refused by --dry-run
// (exit 2, nothing run, nothing on stdout) with every problem named once
// and the nearest right name; Go type names never show.
func TestSuiteValidation(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"key typo", "epoch: 3\ngrid: {dataset: synthetic, loss: margin, seed: 0}\n",
			[]string{`line 1: unknown key "epoch" in suite; did you mean "epochs"?`}},
		{"loss typo", "grid: {dataset: synthetic, loss: [margin, tripplet], seed: 0}\n",
			[]string{`grid 1: unknown loss "tripplet"; did you mean "triplet"?`}},
		{"miner typo", "grid: {dataset: synthetic, loss: margin, miner: distanse, seed: 0}\n",
			[]string{`grid 1: unknown miner "distanse"; did you mean "distance"?`}},
		{"extra flag typo", "extra: --hiden 256\ngrid: {dataset: synthetic, loss: margin, seed: [0, 1]}\n",
			[]string{`2 cells (first synthetic/margin/s0): unknown flag --hiden; did you mean --hidden?`}},
		{"grid extra value", "grid: {dataset: synthetic, loss: margin, seed: 0, extra: [--lr, abc]}\n",
			[]string{`invalid value "abc" for --lr`}},
		{"sampler and data set", "grid: {dataset: omniglott, loss: margin, sampler: spc-3x, seed: 0}\n",
			[]string{`unknown data set "omniglott"; did you mean "omniglot"?`, `unknown sampler "spc-3x"`}},
		{"regularizer", "grid: {dataset: synthetic, loss: margin, regularizer: rhoo, seed: 0}\n",
			[]string{`--regularizer: unknown "rhoo"`}},
		{"all at once", "grid: {dataset: synthetic, loss: [tripplet], miner: distanse, seed: 0, extra: --hiden 3}\n",
			[]string{`loss "tripplet"`, `miner "distanse"`, `unknown flag --hiden`, "3 problems (listed above); nothing was run"}},
		{"cpus-per-task", "slurm: {cpus-per-task: 1.5}\ngrid: {dataset: synthetic, loss: margin, seed: 0}\n",
			[]string{`slurm.cpus-per-task: "1.5" is not an integer`}},
		{"same seed twice", "grid: {dataset: synthetic, loss: margin, seed: [1, \"01\"]}\n",
			[]string{`seeds "1" and "01" are the same seed 1`}},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
		if err := os.WriteFile(f, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errs, code := runCLI(t, "suite", f, "--dry-run")
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want exit 2 and nothing on stdout", c.name, code, out)
		}
		for _, w := range c.want {
			if strings.Count(errs, w) != 1 {
				t.Errorf("%s: stderr\n%s\nholds %q %d times, want once", c.name, errs, w, strings.Count(errs, w))
			}
		}
		if strings.Contains(errs, "suite.Spec") || strings.Contains(errs, "field ") {
			t.Errorf("%s: Go internals in %q", c.name, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(filepath.Base(f), ".yaml"))); err == nil {
			t.Errorf("%s: an output directory was made", c.name)
		}
	}
	// A good file passes and lists its cells.
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("epochs: 0\ngrid: {dataset: synthetic, loss: [margin, triplet], miner: distance, sampler: spc-2, regularizer: rho, seed: 0, extra: --hidden 16}\n"), 0o644)
	out, errs, code := runCLI(t, "suite", good, "--dry-run")
	if code != 0 || !strings.Contains(out, "2 runs, 2 to do") || !strings.Contains(out, "--epochs 0") {
		t.Fatalf("good file: exit %d\n%s%s", code, out, errs)
	}
}
