package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Usage errors exit 2 with one line on stderr and nothing on stdout; an
// unknown command names the nearest one.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--foo"}, "eval: flag provided but not defined: -foo"},
		{[]string{"report", "--nope", "runs"}, "report: flag provided but not defined: -nope"},
		{[]string{"data", "export", "--foo"}, "data export: flag provided but not defined: -foo"},
		{[]string{"evl"}, `unknown command "evl"; did you mean "eval"?`},
		{[]string{"sute"}, `did you mean "suite"?`},
		{[]string{"data", "exprt"}, `unknown command "exprt"; did you mean "export"?`},
		{[]string{"xyzzy"}, `unknown command "xyzzy" (see dmlbench --help)`},
		{[]string{"--foo"}, "flag provided but not defined: -foo"},
		{[]string{"eval", "-embs", "x"}, "flag provided but not defined: -embs; did you mean --emb?"},
		{[]string{"report", "--metric", "R@1", "runs"}, "did you mean --metrics?"},
		{[]string{"--hlp"}, "did you mean --help?"},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, c.args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, no stdout, one line with %q",
				c.args, code, len(out), errs, c.want)
		}
	}
}

// Every command called without an input it requires (a required flag, a
// positional argument) exits 2 with one line on stderr naming what is
// missing, and prints nothing on stdout. The table must cover every leaf
// command; only those that need no input are exempt.
func TestMissingRequiredInput(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	missing := map[string]struct {
		args []string
		want string
	}{
		"data export":      {[]string{"--dataset", "synthetic"}, "give --out DIR (one split) or --dir DIR"},
		"data audit":       {nil, "--dataset is required"},
		"compare":          {[]string{"--emb", emb, "--emb", emb}, "compare needs --emb twice (A, then B) and --labels"},
		"show":             {[]string{"--emb", emb, "--out", "x.html"}, "--emb and --labels are required"},
		"eval":             {[]string{"--emb", emb}, "--emb and --labels are required"},
		"list":             {nil, "list what?"},
		"plot spectrum":    {[]string{"--out", "x.png"}, "--emb files"},
		"plot rho":         {[]string{"runs"}, "--out FILE"},
		"plot recall":      {[]string{"runs"}, "--out FILE"},
		"plot curves":      {[]string{"runs"}, "--out FILE"},
		"plot sweep":       {[]string{"runs"}, "--out FILE"},
		"plot tsne":        {[]string{"--labels", lab, "--out", "x.png"}, "--emb and --labels are required"},
		"report":           {[]string{"--format", "markdown"}, "at least one run directory"},
		"run":              {[]string{"--dataset", "toy-lines"}, "--out is required"},
		"spectra":          {[]string{"--labels", lab}, "--emb FILE"},
		"suite":            {[]string{"--dry-run"}, "one suite file"},
		"suite status":     {nil, "one suite file"},
		"plot tune":        {[]string{"runs"}, "--out FILE"},
		"tune":             {nil, "one spec file"},
		"tune status":      {nil, "one spec file"},
		"tune cell":        {nil, "one cell directory"},
		"external-cell":    {nil, "want --dir DIR and --command"},
		"eval status":      {nil, "takes the --partial DIR of a sharded eval"},
		"eval merge":       {nil, "takes the --partial DIR of a sharded eval"},
		"plot distractors": {nil, "takes one curve file"},
	}
	needNothing := map[string]bool{"version": true}
	app := newApp()
	var walk func(cs []*cli.Command, path string)
	walk = func(cs []*cli.Command, path string) {
		for _, c := range cs {
			p := strings.TrimSpace(path + " " + c.Name)
			if c.Name == "help" {
				continue
			}
			walk(c.Subcommands, p)
			if c.Action == nil || needNothing[p] {
				continue
			}
			m, ok := missing[p]
			if !ok {
				if len(c.Subcommands) == 0 {
					t.Errorf("dmlbench %s: no missing-input case in this test", p)
				}
				continue
			}
			args := append(strings.Fields(p), m.args...)
			out, errs, code := runCLI(t, args...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, m.want) {
				t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2, no stdout, one line with %q",
					args, code, len(out), errs, m.want)
			}
		}
	}
	walk(app.Commands, "")
	var required []string
	var collect func(cs []*cli.Command)
	collect = func(cs []*cli.Command) {
		for _, c := range cs {
			for _, f := range c.Flags {
				if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
					required = append(required, f.Names()[0])
				}
			}
			collect(c.Subcommands)
		}
	}
	collect(buildCommands()) // as declared, before requireFlags takes their checks
	if len(required) == 0 {
		t.Fatal("no flag is declared Required")
	}
	for _, n := range required {
		if !strings.Contains(fmt.Sprint(missing), "--"+n+" is required") {
			t.Errorf("required flag --%s: no case shows its error", n)
		}
	}
}

// Output lost to a full disk is an error (exit 1, one line), whichever
// command wrote it and however (c.App.Writer or os.Stdout).
func TestStdoutFullDisk(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full is Linux-only")
	}
	dir, emb, lab := fixtureFiles(t)
	suite := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(suite, []byte("out: runs\nepochs: 1\ngrid:\n  dataset: synthetic\n  loss: margin\n  seed: [0]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"eval", "--emb", emb, "--labels", lab, "-q", "--k", "1,2"},
		{"eval", "--emb", emb, "--labels", lab, "-q", "--k", "1,2", "--format", "markdown"},
		{"eval", "--emb", emb, "--labels", lab, "-q", "--k", "1,2", "--format", "json"},
		{"list", "metrics"},
		{"version"},
		{"spectra", "--emb", emb},
		{"suite", suite, "--dry-run"},
		{"--help"},
		{"eval", "--help"},
		{"data", "export", "--dataset", "synthetic", "--out", filepath.Join(dir, "export")},
	} {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skip(err)
		}
		var errb strings.Builder
		saved := os.Stdout
		os.Stdout = full
		code := run(append([]string{"dmlbench"}, args...), full, &errb)
		os.Stdout = saved
		full.Close()
		if code != 1 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v > /dev/full: exit %d, stderr %q; want exit 1 and one line naming the full disk", args, code, errb.String())
		}
	}
}
