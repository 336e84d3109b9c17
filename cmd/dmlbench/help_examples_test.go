package main

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
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

// TestHelpExamplesRun runs every example of every --help, as written,
// through a freshly built binary in a scratch directory, so help cannot
// rot. The only changes to the lines are these (the mapping a reader of a
// failure needs):
//
//   - training is cut to one epoch: "--epochs N" becomes "--epochs 1", and
//     a "dmlbench run" without --epochs (or --resume) gets "--epochs 1";
//   - placeholder files exist in the scratch directory: E.npy, L.npy,
//     test_emb.npy, test_labels.npy, a.npy, b.npy, l.npy, base.npy,
//     reg.npy, E2048.npy, Q.npy, QL.npy, G.npy, GL.npy (small synthetic
//     embeddings and integer labels), names.txt (text labels), test.pt (a
//     torch.save dict: embeddings, labels), Q_IDX.npy (row indices), E.npz
//     (keys embeddings and labels), features/cub (a dir: data set),
//     run.yaml (a run config), suite.yaml and
//     docs/examples/omniglot-suite.yaml (one-run suites),
//     docs/examples/omniglot-tune.yaml (a two-trial tuning spec);
//   - run directories exist: runs/omniglot (margin and triplet with the
//     distance miner, seeds 0 and 1, one epoch), runs/dims (embed-dim 16,
//     32), runs/batch (batch-size 16, 32), runs/cub (the dir: data set);
//   - each help text's examples run in order in their own copy of this
//     scratch directory;
//   - examples needing what this machine lacks are skipped, by their own
//     error: a backend not compiled in, the slurm executor without sbatch,
//     a data set not installed.
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
	sh := func(line string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "sh", "-c", line)
		c.Dir, c.Env = work, env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	writeExampleWorld(t, world)
	for _, setup := range []string{
		"dmlbench suite setup/omniglot.yaml --quiet",
		"dmlbench suite setup/dims.yaml --quiet",
		"dmlbench suite setup/batch.yaml --quiet",
		"dmlbench run --dataset dir:features/cub --loss margin --miner distance --epochs 1 --quiet --out runs/cub/margin-s0",
	} {
		if out, err := sh(setup); err != nil {
			t.Fatalf("setup %q: %v\n%s", setup, err, out)
		}
	}
	skip := regexp.MustCompile(`not compiled into this binary|is not in this binary|sbatch|DMLBENCH_DATA|dataset-fashion-mnist`)
	copies := map[string]string{}
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
		out, err := sh(line)
		if err != nil && skip.MatchString(out) {
			t.Logf("skipped (needs what this machine lacks): %s\n%s", ex.line, lastLines(out, 2))
			continue
		}
		if err != nil {
			t.Errorf("dmlbench %s --help example fails: %s\n(ran: %s)\n%v\n%s", ex.command, ex.line, line, err, lastLines(out, 5))
		}
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

// writeExampleWorld creates the placeholder files of TestHelpExamplesRun.
func writeExampleWorld(t *testing.T, dir string) {
	t.Helper()
	ds, err := fixtures.Load("synthetic", fixtures.Options{Classes: 40, PerClass: 12, Dim: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	x, y := ds.Test.X, ds.Test.Labels
	for _, name := range []string{"E", "test_emb", "a", "b", "base", "reg", "E2048", "Q", "G"} {
		must(fixtures.SaveNPY(p(name+".npy"), x))
	}
	for _, name := range []string{"L", "test_labels", "l", "QL", "GL"} {
		must(fixtures.SaveLabelsNPY(p(name+".npy"), y))
	}
	var names strings.Builder
	for _, v := range y {
		fmt.Fprintf(&names, "class-%d\n", v)
	}
	must(os.WriteFile(p("names.txt"), []byte(names.String()), 0o644))
	// test.pt: a torch.save dict of tensors (fixtures/testdata/gen_torch.py);
	// Q_IDX.npy: query rows of E.npy
	pt, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "testdata", "torch_dict.pt"))
	must(err)
	must(os.WriteFile(p("test.pt"), pt, 0o644))
	writeNPY(t, p("Q_IDX.npy"), "<i8", []int{4}, []int64{0, 5, 17, 100})
	// E.npz with keys embeddings and labels
	tmp := t.TempDir()
	must(fixtures.SaveNPY(filepath.Join(tmp, "embeddings.npy"), x))
	must(fixtures.SaveLabelsNPY(filepath.Join(tmp, "labels.npy"), y))
	f, err := os.Create(p("E.npz"))
	must(err)
	zw := zip.NewWriter(f)
	for _, k := range []string{"embeddings.npy", "labels.npy"} {
		b, err := os.ReadFile(filepath.Join(tmp, k))
		must(err)
		w, err := zw.Create(k)
		must(err)
		_, err = w.Write(b)
		must(err)
	}
	must(zw.Close())
	must(f.Close())
	// a dir: data set
	must(fixtures.SaveNPY(p("features/cub/train_emb.npy"), ds.Train.X))
	must(fixtures.SaveLabelsNPY(p("features/cub/train_labels.npy"), ds.Train.Labels))
	must(fixtures.SaveNPY(p("features/cub/test_emb.npy"), x))
	must(fixtures.SaveLabelsNPY(p("features/cub/test_labels.npy"), y))
	files := map[string]string{
		"run.yaml":                          "dataset: synthetic\nloss: multisimilarity\nepochs: 1\n",
		"suite.yaml":                        "out: runs/suite\nepochs: 1\ngrid:\n  dataset: synthetic\n  loss: margin\n  miner: distance\n  seed: [0]\n",
		"docs/examples/omniglot-suite.yaml": "out: ../../runs/omniglot-example\nepochs: 1\ngrid:\n  dataset: synthetic\n  loss: margin\n  miner: distance\n  seed: [0]\n",
		"docs/examples/omniglot-tune.yaml":  "out: ../../runs/omniglot-tune\ndataset: synthetic\nbudget: 2\nfolds: 2\nfixed: {epochs: 1}\nfinal: {metrics: [R@1]}\nmethods:\n  - {loss: margin, miner: distance, space: {lr: {low: 0.0001, high: 0.01, log: true}}}\n",
		"setup/omniglot.yaml":               "out: ../runs/omniglot\nepochs: 1\ngrid:\n  dataset: omniglot\n  loss: [margin, triplet]\n  miner: distance\n  sampler: spc-2\n  seed: [0, 1]\n",
		"setup/dims.yaml":                   "out: ../runs/dims\nepochs: 1\ngrid:\n  dataset: synthetic\n  loss: margin\n  miner: distance\n  embed-dim: [16, 32]\n  seed: [0]\n",
		"setup/batch.yaml":                  "out: ../runs/batch\nepochs: 1\ngrid:\n  dataset: synthetic\n  loss: margin\n  miner: distance\n  batch-size: [16, 32]\n  seed: [0]\n",
	}
	for name, content := range files {
		must(os.MkdirAll(filepath.Dir(p(name)), 0o755))
		must(os.WriteFile(p(name), []byte(content), 0o644))
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
