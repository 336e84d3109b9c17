package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A misspelt name given to report, plot, spectra, list, compare or show
// exits 2 with the nearest name, before any figure or table is written.
func TestMisspeltNamesSuggest(t *testing.T) {
	runs := filepath.Join("..", "..", "docs", "examples", "omniglot", "runs-batch")
	fig := filepath.Join(t.TempDir(), "f.png")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", runs, "--group-by", "los"}, `did you mean "loss"?`},
		{[]string{"report", runs, "--metrics", "R@l"}, `did you mean "R@1"?`},
		{[]string{"report", runs, "--format", "mardown"}, `did you mean "markdown"?`},
		{[]string{"report", runs, "--ci-method", "boot"}, `did you mean "bootstrap"?`},
		{[]string{"report", runs, "--color", "alway"}, `did you mean "always"?`},
		{[]string{"report", runs, "--source", "finl"}, `did you mean "final"?`},
		{[]string{"plot", "rho", runs, "--out", fig, "--group-by", "los"}, `did you mean "loss"?`},
		{[]string{"plot", "rho", runs, "--out", fig, "--metric", "R@l"}, `did you mean "R@1"?`},
		{[]string{"plot", "curves", runs, "--out", fig, "--metric", "NMl"}, `did you mean "NMI"?`},
		{[]string{"plot", "rho", runs, "--out", fig, "--style", "papr"}, `did you mean "paper"?`},
		{[]string{"plot", "rho", runs, "--out", fig, "--palette", "okabe"}, `did you mean "okabe-ito"?`},
		{[]string{"plot", "rho", runs, "--out", fig, "--source", "finl"}, `did you mean "final"?`},
		{[]string{"plot", "spectrum", runs, "--out", fig, "--normalize", "mx"}, `did you mean "max"?`},
		{[]string{"list", "metrics", "--format", "jsn"}, `did you mean "json"?`},
		{[]string{"show", "--emb", "e.npy", "--labels", "l.npy", "--out", "f.svg", "--format", "svgg"}, `did you mean "svg"?`},
	} {
		_, stderr, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %s", tc.args, code, stderr, tc.want)
		}
	}
}
