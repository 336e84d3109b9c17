package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// helpExample is one example command line of a help text.
type helpExample struct {
	command string // "eval", "plot tsne", "" for the top-level help
	line    string
}

// helpExamples collects every line of every help text (the top level,
// every command and subcommand; descriptions, not the usage synopsis) that
// starts with "dmlbench ": the examples a user copies.
func helpExamples() []helpExample {
	app := newApp()
	var out []helpExample
	add := func(cmd, text string) {
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "dmlbench ") {
				out = append(out, helpExample{cmd, l})
			}
		}
	}
	add("", app.Description)
	var walk func(cs []*cli.Command, path string)
	walk = func(cs []*cli.Command, path string) {
		for _, c := range cs {
			add(path+c.Name, c.Description)
			walk(c.Subcommands, path+c.Name+" ")
		}
	}
	walk(app.Commands, "")
	return out
}

// The README tour: the commands a reader has run before reaching --help,
// cut to one epoch (their outputs are what the examples name: out/px,
// runs/margin-s0, out/omniglot-test, runs/omniglot-example).
var readmeTour = []string{
	"dmlbench data export --dataset omniglot --split test --normalize --out out/px",
	"dmlbench run --dataset omniglot --loss margin --miner distance --sampler spc-2 --epochs 20 --seed 0 --val-split 0.2 --save-embeddings --out runs/margin-s0 --quiet",
	"dmlbench data export --dataset omniglot --split test --out out/omniglot-test",
	"dmlbench suite docs/examples/omniglot-suite.yaml --quiet",
}

// tourSuite stands in for docs/examples/omniglot-suite.yaml in the test's
// copy of the repository: the same grid cut to one epoch, two losses and
// two seeds.
const tourSuite = `out: ../../runs/omniglot-example
epochs: 1
quiet: true
grid:
  dataset: omniglot
  loss: [margin, triplet]
  miner: distance
  sampler: spc-2
  seed: [0, 1]
eval:
  - name: pixels
    dataset: omniglot
    method: {loss: pixels}
    emb: ../../out/omniglot-test/emb.npy
    labels: ../../out/omniglot-test/labels.npy
`

// tourTune stands in for docs/examples/omniglot-tune.yaml: two trials of
// one method on two folds, one epoch each.
const tourTune = `out: ../../runs/omniglot-tune
dataset: synthetic
search: random
budget: 2
folds: 2
fixed: {epochs: 1}
final: {metrics: [R@1]}
methods:
  - {loss: margin, miner: distance, space: {lr: {low: 0.0001, high: 0.01, log: true}}}
`

var update = flag.Bool("update", false, "rewrite testdata/help/*.golden")

// TestHelpExamplesRun runs every example of every --help, as written,
// through a freshly built binary, in a scratch copy of what a reader has:
// the files the repository ships (docs/examples, fixtures/arrays/testdata) and
// the outputs of the README tour (readmeTour, one epoch). So help cannot
// rot, and no example names a file the reader does not have. The only
// changes to the lines are:
//
//   - training is cut to one epoch: "--epochs N" becomes "--epochs 1", a
//     "dmlbench run" without --epochs (or --resume) gets "--epochs 1", and
//     docs/examples/omniglot-suite.yaml is tourSuite and
//     docs/examples/omniglot-tune.yaml is tourTune;
//   - each help text's examples run in order in their own copy of this
//     scratch directory;
//   - examples needing what this machine lacks are skipped, by their own
//     error: a backend not compiled in, the slurm executor without sbatch,
//     a data set not installed.
//
// Like benchstat's doc_test.go, the output of eval's examples is compared
// with testdata/help/eval-NN.golden (go test -run TestHelpExamplesRun
// -update rewrites them), timings and the version masked. Examples that
// read trained embeddings (runs/) are left out of that comparison: the
// training's float sums depend on the CPU's kernels.
func TestHelpExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and trains toy runs")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary")
	}
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	build := exec.Command(gobin, "build", "-o", filepath.Join(bin, "dmlbench"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if os.Getenv("DMLBENCH_DATA") == "" {
		if d, err := filepath.Abs("../../../shared/data"); err == nil {
			if _, err := os.Stat(d); err == nil {
				env = append(env, "DMLBENCH_DATA="+d)
			}
		}
	}
	world := filepath.Join(base, "world")
	work := world
	sh := func(line string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "sh", "-c", line)
		var stdout, stderr bytes.Buffer
		c.Dir, c.Env, c.Stdout, c.Stderr = work, env, &stdout, &stderr
		err := c.Run()
		return stdout.String(), stderr.String(), err
	}
	writeExampleWorld(t, world)
	for _, line := range readmeTour {
		if out, errs, err := sh(exampleLine(line)); err != nil {
			t.Fatalf("README tour %q: %v\n%s%s", line, err, out, errs)
		}
	}
	skip := regexp.MustCompile(`not compiled into this binary|is not in this binary|sbatch|DMLBENCH_DATA|dataset-fashion-mnist`)
	copies := map[string]string{}
	evalN := 0
	for _, ex := range helpExamples() {
		// Each help text's examples run in order in their own copy of the
		// world: they may build on each other, not on another help's.
		if copies[ex.command] == "" {
			copies[ex.command] = filepath.Join(base, fmt.Sprintf("help%d", len(copies)))
			if out, err := exec.Command("cp", "-a", world, copies[ex.command]).CombinedOutput(); err != nil {
				t.Fatalf("copy the example world: %v\n%s", err, out)
			}
		}
		work = copies[ex.command]
		line := exampleLine(ex.line)
		t0 := time.Now()
		out, errs, err := sh(line)
		t.Logf("%.1f s: %s", time.Since(t0).Seconds(), line)
		if err != nil && skip.MatchString(errs) {
			t.Logf("skipped (needs what this machine lacks): %s\n%s", ex.line, lastLines(errs, 2))
			continue
		}
		if err != nil {
			t.Errorf("dmlbench %s --help example fails: %s\n(ran: %s)\n%v\n%s", ex.command, ex.line, line, err, lastLines(out+errs, 5))
			continue
		}
		if ex.command == "eval" {
			evalN++
			if !strings.Contains(line, "runs/") {
				checkGolden(t, fmt.Sprintf("testdata/help/eval-%02d.golden", evalN), ex.line, maskVarying(out))
			}
		}
	}
}

// maskVarying replaces what differs between runs of the same command
// (seconds, the version) in eval's output.
func maskVarying(s string) string {
	s = secondsField.ReplaceAllString(s, "#.## s")
	s = jsonVersion.ReplaceAllString(s, `"version": "#"`)
	return jsonTimings.ReplaceAllString(s, `"timings": {#}`)
}

var (
	secondsField = regexp.MustCompile(`\d+\.\d\d s\b`)
	jsonVersion  = regexp.MustCompile(`"version": "[^"]*"`)
	jsonTimings  = regexp.MustCompile(`(?s)"timings": \{[^}]*\}`)
)

// checkGolden compares got, the output of example line, with the golden
// file (rewritten with -update). The file's first line is the example.
func checkGolden(t *testing.T, path, line, got string) {
	t.Helper()
	got = "$ " + line + "\n" + got
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (go test -run TestHelpExamplesRun -update writes it)", err)
		return
	}
	if string(want) != got {
		t.Errorf("output of %q differs from %s:\n--- got\n%s\n--- want\n%s", line, path, got, want)
	}
}

var epochsFlag = regexp.MustCompile(`--epochs[ =]\d+`)

// exampleLine applies the one-epoch rule of TestHelpExamplesRun.
func exampleLine(line string) string {
	line = epochsFlag.ReplaceAllString(line, "--epochs 1")
	parts := strings.Split(line, "&&")
	for i, p := range parts {
		t := strings.TrimSpace(p)
		if strings.HasPrefix(t, "dmlbench run ") && !strings.Contains(t, "--epochs") && !strings.Contains(t, "--resume") {
			parts[i] = strings.Replace(p, "dmlbench run ", "dmlbench run --epochs 1 ", 1)
		}
	}
	return strings.Join(parts, "&&")
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// writeExampleWorld creates the scratch copy of TestHelpExamplesRun: the
// files the repository ships (docs/examples, fixtures/arrays/testdata), with
// tourSuite in place of the example suite.
func writeExampleWorld(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"docs/examples", "fixtures/arrays/testdata"} {
		dst := filepath.Join(dir, d)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", d), dst).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", d, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "docs/examples/omniglot-suite.yaml"), []byte(tourSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs/examples/omniglot-tune.yaml"), []byte(tourTune), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every flag line of every help states its default once and names its
// value with one word, and is shown as it is typed (--k, not -k).
func TestHelpFlagLines(t *testing.T) {
	app := newApp()
	var walk func(cs []*cli.Command, path string)
	walk = func(cs []*cli.Command, path string) {
		for _, c := range cs {
			for _, f := range c.Flags {
				line := cli.FlagStringer(f)
				head, usage, _ := strings.Cut(line, "\t")
				if n := strings.Count(usage, "(default"); n > 1 {
					t.Errorf("dmlbench %s: %q states its default %d times", path+c.Name, line, n)
				}
				// "--name VALUE", or a repeatable "--name VALUE [ --name VALUE ]"
				fields := strings.Fields(strings.Split(head, ", ")[0])
				if !strings.HasPrefix(fields[0], "--") || (len(fields) > 2 && fields[2] != "[") {
					t.Errorf("dmlbench %s: flag shown as %q", path+c.Name, head)
				}
			}
			walk(c.Subcommands, path+c.Name+" ")
		}
	}
	walk(app.Commands, "")
}
