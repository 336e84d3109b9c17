package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMisspeltNames: a misspelt data set, architecture, loss, miner,
// sampler, convention, distance, backend, metric or test-time mode stops
// run and eval where the settings are
// resolved: exit 2, one line naming the nearest name, nothing trained and
// no run directory written.
func TestMisspeltNames(t *testing.T) {
	td := "../../docs/examples/features/"
	evalArgs := []string{"eval", "-q", "--emb", td + "test_emb.npy", "--labels", td + "test_labels.npy"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--loss", "margni"}, `unknown loss "margni"; did you mean "margin"?`},
		{[]string{"run", "--loss", "margin", "--miner", "distanc"}, `unknown miner "distanc"; did you mean "distance"?`},
		{[]string{"run", "--loss", "margin", "--sampler", "spc2"}, `unknown sampler "spc2"; did you mean "spc-2"?`},
		{[]string{"run", "--loss", "margin", "--compat", "stric"}, `convention "stric": want strict, roth, pml or pml3; did you mean strict?`},
		{[]string{"run", "--loss", "margin", "--distance", "cosin"}, `unknown distance "cosin"; did you mean "cosine"?`},
		{[]string{"run", "--loss", "margin", "--backend", "exct"}, `unknown k-NN backend "exct"; did you mean "exact"?`},
		{[]string{"run", "--loss", "margin", "--select-by", "R@l"}, `unknown metric "R@l"; did you mean "R@1"?`},
		{[]string{"run", "--loss", "margin", "--metrics", "R@l"}, `unknown metric "R@l"; did you mean "R@1"?`},
		{[]string{"run", "--loss", "margin", "--arch", "mlpp"}, `unknown architecture "mlpp"; did you mean "mlp"?`},
		{[]string{"run", "--loss", "margin", "--test-time", "knnn"}, `unknown test-time mode "knnn"; did you mean "knn"?`},
		{[]string{"run", "--loss", "margin", "--dataset", "omniglott"}, `unknown dataset "omniglott"; did you mean "omniglot"?`},
		{append(evalArgs, "--backend", "exct"), `--backend: unknown k-NN backend "exct"; did you mean "exact"?`},
		{append(evalArgs, "--compat", "stric"), `--compat "stric": want strict, roth, pml or pml3; did you mean strict?`},
		{append(evalArgs, "--distance", "cosin"), `--distance: unknown distance "cosin"; did you mean "cosine"?`},
		{append(evalArgs, "--metrics", "R@1,MAP@RR"), `--metrics: unknown metric "MAP@RR"; did you mean "MAP@R"?`},
	} {
		args := c.args
		var out string
		if args[0] == "run" {
			out = filepath.Join(t.TempDir(), "r")
			args = append([]string{"run", "--dataset", "synthetic", "--epochs", "1", "--quiet", "--out", out}, args[1:]...)
		}
		stdout, stderr, code := runCLI(t, args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
		if out != "" {
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%v: %s exists (%v); a refused run writes nothing", c.args, out, err)
			}
		}
	}
}
