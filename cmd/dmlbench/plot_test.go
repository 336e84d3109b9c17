package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A metric no run has is a usage error (exit 2) of one line that names
// the metrics the runs do have, in every subcommand that takes --metric,
// and so is a --group-by key no run's method has; nothing is written.
func TestPlotUnknownMetric(t *testing.T) {
	dir := t.TempDir()
	cub := testRuns + "/cub200"
	out := filepath.Join(dir, "x.png")
	for _, args := range [][]string{
		{"plot", "curves", cub, "--metric", "foo", "--out", out},
		{"plot", "rho", cub, "--metric", "foo", "--out", out},
		{"plot", "sweep", testRuns + "/omniglot", "--param", "embed-dim", "--metric", "foo", "--out", out},
	} {
		if _, errs, code := runCLI(t, append(args[:len(args)-2:len(args)-2], "--group-by", "nope", "--out", out)...); code != 2 ||
			!strings.Contains(errs, `"nope"`) || !strings.Contains(errs, "loss") {
			t.Errorf("%v --group-by nope: exit %d, stderr %q", args[:2], code, errs)
		}
		stdout, errs, code := runCLI(t, args...)
		if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
			!strings.Contains(errs, `"foo"`) || !strings.Contains(errs, "R@1") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args[:2], code, stdout, errs)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a figure was written")
	}
}

// The figure flags: --dpi sets the PNG's pixels, --style paper the size,
// bad values are usage errors, --title "" is accepted, and `plot --help`
// lists every subcommand, tune and the image formats included.
func TestPlotFigureFlags(t *testing.T) {
	dir := t.TempDir()
	cub := testRuns + "/cub200"
	size := func(p string) (int, int) {
		t.Helper()
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c, err := png.DecodeConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		return c.Width, c.Height
	}
	for _, c := range []struct {
		args []string
		w, h int
	}{
		{[]string{"--width", "3", "--height", "2", "--dpi", "100"}, 300, 200},
		{[]string{"--style", "paper", "--dpi", "100"}, 330, 240},
		{[]string{"--style", "paper", "--width", "7", "--dpi", "100"}, 700, 240},
		{[]string{"--width", "2", "--height", "1"}, 600, 300}, // default 300 dpi
	} {
		p := filepath.Join(dir, "r.png")
		args := append([]string{"plot", "recall", cub, "--out", p, "--title", ""}, c.args...)
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		if w, h := size(p); w != c.w || h != c.h {
			t.Errorf("%v: %d×%d, want %d×%d", c.args, w, h, c.w, c.h)
		}
	}
	for _, bad := range [][]string{
		{"--style", "poster"}, {"--dpi", "0"}, {"--dpi", "5000"}, {"--source", "worst"},
	} {
		args := append([]string{"plot", "recall", cub, "--out", filepath.Join(dir, "b.png")}, bad...)
		if _, errs, code := runCLI(t, args...); code != 2 || !strings.Contains(errs, bad[0]) {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
	if _, errs, code := runCLI(t, "plot", "spectrum", "--emb", "a.npy", "--emb", "b.npy", "--name", "x", "--out", filepath.Join(dir, "s.png")); code != 2 || !strings.Contains(errs, "--name") {
		t.Errorf("one --name for two --emb: exit %d, %q", code, errs)
	}
	help, _, _ := runCLI(t, "plot", "--help")
	for _, want := range []string{"dmlbench plot tune TUNE_DIR", "tune ", ".jpg", "--style paper"} {
		if !strings.Contains(help, want) {
			t.Errorf("plot --help lacks %q", want)
		}
	}
	sub, _, _ := runCLI(t, "plot", "recall", "--help")
	for _, want := range []string{"--dpi", "--style", "--caption", ".jpg"} {
		if !strings.Contains(sub, want) {
			t.Errorf("plot recall --help lacks %q", want)
		}
	}
}

// --title "" draws no title; without --title the default one is drawn;
// --caption adds its line.
func TestPlotTitleFlag(t *testing.T) {
	dir := t.TempDir()
	cub := testRuns + "/cub200"
	for _, c := range []struct {
		args       []string
		title, cap bool
	}{
		{nil, true, false},
		{[]string{"--title", ""}, false, false},
		{[]string{"--title", "", "--caption", "CUB-200, 3 seeds"}, false, true},
	} {
		p := filepath.Join(dir, "r.svg")
		if _, errs, code := runCLI(t, append([]string{"plot", "recall", cub, "--out", p}, c.args...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), ">Recall@k<"); got != c.title {
			t.Errorf("%v: title drawn %v", c.args, got)
		}
		if got := strings.Contains(string(b), ">CUB-200, 3 seeds<"); got != c.cap {
			t.Errorf("%v: caption drawn %v", c.args, got)
		}
	}
}
