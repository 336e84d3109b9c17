package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/internal/record"
)

const demo = `
out: runs
epochs: 3
extra: --lr 1e-3
grid:
  dataset: omniglot
  loss: [margin, triplet]
  miner: distance
  sampler: spc-2
  seed: [0, 1]
grids:
  - dataset: omniglot
    loss: margin
    miner: distance
    sampler: spc-2
    embed-dim: [32, 64]
    batch-size: 56
    regularizer: [none, rho]
    seed: 0
    epochs: 7
    extra: [--hidden, "256"]
eval:
  - name: ImageNet
    dataset: cub200
    seed: 0
    emb: feats/e.npy
    labels: /abs/l.npy
    extra: [--compat, roth]
`

func TestParseAndJobs(t *testing.T) {
	s, err := Parse([]byte(demo))
	if err != nil {
		t.Fatal(err)
	}
	s.Dir = "/suites"
	jobs, err := s.Jobs(s.OutDir(""))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	want := []string{
		"omniglot/margin-distance-spc2/s0", "omniglot/triplet-distance-spc2/s0",
		"omniglot/margin-distance-spc2/s1", "omniglot/triplet-distance-spc2/s1",
		"omniglot/margin-distance-spc2-d32-b56/s0", "omniglot/margin-distance-spc2-d64-b56/s0",
		"omniglot/margin-distance-spc2-rho-d32-b56/s0", "omniglot/margin-distance-spc2-rho-d64-b56/s0",
		"cub200/imagenet/s0",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("names:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	got := strings.Join(jobs[0].Args, " ")
	if got != "run --dataset omniglot --loss margin --miner distance --sampler spc-2 --seed 0 --epochs 3 --out /suites/runs/omniglot/margin-distance-spc2/s0 --quiet --lr 1e-3" {
		t.Fatalf("args: %s", got)
	}
	got = strings.Join(jobs[6].Args, " ")
	if got != "run --dataset omniglot --loss margin --miner distance --sampler spc-2 --regularizer rho --embed-dim 32 --batch-size 56 --seed 0 --epochs 7 --out /suites/runs/omniglot/margin-distance-spc2-rho-d32-b56/s0 --quiet --method batch_size=56 --method embed_dim=32 --method regularizer=rho --lr 1e-3 --hidden 256" {
		t.Fatalf("args: %s", got)
	}
	if m := jobs[6].Method; m["regularizer"] != "rho" || m["embed_dim"] != "32" || m["batch_size"] != "56" || m["loss"] != "margin" {
		t.Fatalf("method %v", m)
	}
	ev := jobs[8]
	if ev.Kind != Eval || strings.Join(ev.Args, " ") != "eval --emb /suites/feats/e.npy --labels /abs/l.npy --format json --quiet --compat roth" || ev.Method["loss"] != "ImageNet" {
		t.Fatalf("eval job %+v", ev)
	}
	if s.OutDir("/x") != "/x" {
		t.Fatal("--out override ignored")
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		``,
		`grid: {dataset: a, loss: b}`,
		`grid: {dataset: a, seed: 0}`,
		`grid: {loss: a, seed: 0}`,
		`grid: {dataset: a, loss: b, seed: x}`,
		`grid: {dataset: a, loss: b, seed: 0, embed-dim: -3}`,
		`grid: {dataset: a, loss: b, seed: 0, lossy: 1}`,
		`grid: {dataset: a, loss: --evil, seed: 0}`,
		`eval: [{name: a, dataset: b}]`,
		`eval: [{name: a, dataset: b, emb: e, labels: l}, {name: a, dataset: b, emb: e, labels: l}]`,
		`epochs: -1
grid: {dataset: a, loss: b, seed: 0}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted: %q", bad)
		}
	}
	// Two grids colliding on a directory.
	s, err := Parse([]byte("grids: [{dataset: a, loss: b, seed: 0}, {dataset: a, loss: b, seed: 0, extra: --x}]"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Jobs("out"); err == nil || !strings.Contains(err.Error(), "tag") {
		t.Fatalf("collision: %v", err)
	}
}

// fakeTrainer imitates `dmlbench run`: it writes run.json with status done
// into --out, or fails for losses named "broken".
func fakeTrainer(calls *atomic.Int32) ExecFunc {
	return func(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
		calls.Add(1)
		if args[0] == "eval" {
			fmt.Fprint(stdout, `{"metrics":{"R@1":0.5,"NMI":0.6,"rho":"+Inf","MAP@R":null},"version":"test","n":10,"dim":4,"classes":2,"timings":{"knn":0.1}}`)
			return nil
		}
		var out, loss, seed string
		for i := 0; i+1 < len(args); i++ {
			switch args[i] {
			case "--out":
				out = args[i+1]
			case "--loss":
				loss = args[i+1]
			case "--seed":
				seed = args[i+1]
			}
		}
		fmt.Fprintln(stderr, "training", loss, seed)
		if loss == "broken" {
			return errors.New("exit status 1")
		}
		if loss == "silent" {
			return nil
		}
		return record.WriteAtomic(filepath.Join(out, "run.json"), record.Run{Schema: 1, Dataset: "omniglot", Method: map[string]string{"loss": loss}, Status: "done", Final: record.Metrics{"R@1": 0.4}})
	}
}

func TestRunnerResumes(t *testing.T) {
	dir := t.TempDir()
	s, err := Parse([]byte(`grid: {dataset: omniglot, loss: [margin, triplet, contrastive], seed: [0, 1, 2]}
eval: [{name: base, dataset: omniglot, emb: e.npy, labels: l.npy}]`))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Jobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	var log strings.Builder
	r := &Runner{Bin: "dmlbench", Exec: fakeTrainer(&calls), Log: &log, Progress: io.Discard, Jobs: 2}
	res, err := r.Run(context.Background(), jobs)
	if err != nil || len(res.Done) != 10 || calls.Load() != 10 {
		t.Fatalf("first pass: %+v %v calls %d", res, err, calls.Load())
	}
	ev, err := record.Read(filepath.Join(dir, "omniglot/base/s0/run.json"))
	if err != nil || ev.Status != "done" || ev.Final["R@1"] != 0.5 || len(ev.Final) != 4 || !math.IsInf(ev.Final["rho"], 1) || !math.IsNaN(ev.Final["MAP@R"]) || ev.Method["loss"] != "base" || ev.Version != "test" {
		t.Fatalf("eval run.json %+v %v", ev, err)
	}
	var cfg map[string]any
	if json.Unmarshal(ev.Config, &cfg) != nil || cfg["n"].(float64) != 10 {
		t.Fatalf("eval config %s", ev.Config)
	}
	tr, err := record.Read(filepath.Join(dir, "omniglot/margin/s1/run.json"))
	if err != nil || tr.Method["loss"] != "margin" || tr.Dataset != "omniglot" {
		t.Fatalf("train run.json %+v %v", tr, err)
	}
	if !strings.Contains(log.String(), "ETA") {
		t.Fatalf("log: %s", log.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "omniglot/margin/s1/log.txt"))
	if !strings.Contains(string(b), "training margin 1") || !strings.Contains(string(b), "dmlbench run --dataset omniglot") {
		t.Fatalf("log.txt: %q", b)
	}
	// Second pass: everything is done, nothing runs.
	res, err = r.Run(context.Background(), jobs)
	if err != nil || len(res.Skipped) != 10 || calls.Load() != 10 {
		t.Fatalf("second pass: %+v %v calls %d", res, err, calls.Load())
	}
	// Simulate a killed suite: one run.json left "running" with a
	// checkpoint (resumed with --resume), one missing (run afresh).
	os.Remove(filepath.Join(dir, "omniglot/triplet/s2/run.json"))
	record.WriteAtomic(filepath.Join(dir, "omniglot/margin/s2/run.json"), record.Run{Schema: 1, Status: "running"})
	os.WriteFile(filepath.Join(dir, "omniglot/margin/s2/ckpt"), nil, 0o644)
	r.ResumeFile, r.ResumeFlag = "ckpt", "--resume"
	var resumed []string
	inner := r.Exec
	r.Exec = func(ctx context.Context, bin string, args []string, o, e io.Writer) error {
		if args[len(args)-1] == "--resume" {
			resumed = append(resumed, args[8])
		}
		return inner(ctx, bin, args, o, e)
	}
	r.Jobs = 1
	res, err = r.Run(context.Background(), jobs)
	if err != nil || len(res.Done) != 2 || len(res.Skipped) != 8 || calls.Load() != 12 {
		t.Fatalf("resume: %+v %v calls %d", res, err, calls.Load())
	}
	if len(resumed) != 1 || !strings.HasSuffix(resumed[0], "omniglot/margin/s2") {
		t.Fatalf("resumed %v", resumed)
	}
}

func TestRunnerFailures(t *testing.T) {
	dir := t.TempDir()
	s, _ := Parse([]byte(`grid: {dataset: d, loss: [broken, margin, silent], seed: 0}`))
	jobs, _ := s.Jobs(dir)
	var calls atomic.Int32
	r := &Runner{Bin: "dmlbench", Exec: fakeTrainer(&calls)}
	res, err := r.Run(context.Background(), jobs)
	if err == nil || len(res.Failed) != 2 || len(res.Done) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	// The broken run leaves a "failed" run.json (reports skip it; the next
	// suite run retries it).
	rec, rerr := record.Read(filepath.Join(dir, "d/broken/s0/run.json"))
	if rerr != nil || rec.Status != "failed" || rec.Method["loss"] != "broken" {
		t.Fatalf("failed marker %+v %v", rec, rerr)
	}
	if !strings.Contains(res.Errors["d/silent/s0"].Error(), "run.json") {
		t.Fatalf("silent trainer: %v", res.Errors["d/silent/s0"])
	}
	// Fail-fast stops after the first failure (sequential).
	dir2 := t.TempDir()
	jobs, _ = s.Jobs(dir2)
	calls.Store(0)
	r.FailFast = true
	res, _ = r.Run(context.Background(), jobs)
	if calls.Load() != 1 || len(res.Failed) != 1 {
		t.Fatalf("fail-fast ran %d jobs: %+v", calls.Load(), res)
	}
}

// TestRunnerInterrupt cancels the suite while the second run is in flight:
// the first run stays done, the second is interrupted (not failed, no
// "failed" run.json written over it), nothing after it starts, and the
// error says how to resume.
func TestRunnerInterrupt(t *testing.T) {
	dir := t.TempDir()
	s, _ := Parse([]byte(`grid: {dataset: d, loss: [a, b, c, e], seed: 0}`))
	jobs, _ := s.Jobs(dir)
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	inner := fakeTrainer(&calls)
	var once sync.Once
	r := &Runner{Bin: "dmlbench", Exec: func(c context.Context, bin string, args []string, o, e io.Writer) error {
		if calls.Load() == 1 {
			once.Do(cancel)
			<-c.Done()
			calls.Add(1)
			return c.Err()
		}
		return inner(c, bin, args, o, e)
	}}
	res, err := r.Run(ctx, jobs)
	if err == nil || !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || len(res.Done) != 1 || calls.Load() != 2 ||
		len(res.Failed) != 0 || strings.Join(res.Interrupted, ",") != "d/b/s0" {
		t.Fatalf("%+v %v calls %d", res, err, calls.Load())
	}
	if msg := err.Error(); !strings.Contains(msg, "rerun the same command to resume") || strings.Contains(msg, "context canceled") {
		t.Fatalf("error %q", msg)
	}
	if _, serr := os.Stat(filepath.Join(dir, "d/b/s0/run.json")); serr == nil {
		t.Fatal("the interrupted run got a run.json from the suite")
	}
	if !IsDone(filepath.Join(dir, "d/a/s0")) || IsDone(filepath.Join(dir, "d/b/s0")) {
		t.Fatal("wrong runs done after interrupt")
	}
}

func TestSlugAndRunName(t *testing.T) {
	if Slug("SPC-2") != "spc2" || Slug("β/..") != ".." && Slug("--") != "x" {
		t.Fatal("slug")
	}
	if n := RunName("CUB200", "margin", "", "", "none", "", "", "", "3"); n != filepath.Join("cub200", "margin", "s3") {
		t.Fatal(n)
	}
	if CommandLine("dmlbench", Job{Args: []string{"run", "--x", "a b"}}) != "dmlbench run --x 'a b'" {
		t.Fatal("quoting")
	}
}

// LoadCells is Load, OutDir and Jobs in one: the file's own output
// directory unless one is given, and a bad file's error.
func TestLoadCells(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte("grid:\n  dataset: toy-lines\n  loss: [margin, triplet]\n  seed: [0]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, out, jobs, err := LoadCells(path, "", 0)
	if err != nil || spec == nil || out != filepath.Join(dir, "s") || len(jobs) != 2 {
		t.Fatalf("got %v %q %d jobs, %v", spec, out, len(jobs), err)
	}
	if !strings.HasPrefix(jobs[0].Dir, out+string(filepath.Separator)) {
		t.Fatalf("cell %s outside %s", jobs[0].Dir, out)
	}
	if _, out, _, _ := LoadCells(path, "elsewhere", 0); out != "elsewhere" {
		t.Fatalf("override: %q", out)
	}
	if _, _, _, err := LoadCells(filepath.Join(dir, "none.yaml"), "", 0); err == nil {
		t.Fatal("missing file accepted")
	}
}

// epochs: 0 given in the file means 0 (only the untrained evaluation), at
// the top level and in a grid, as --epochs 0 does for run; left out, the
// trainer's default applies.
func TestExplicitZeroEpochs(t *testing.T) {
	epochsArg := func(src string) []string {
		t.Helper()
		s, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := s.Jobs("out")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, j := range jobs {
			e := "unset"
			for i, a := range j.Args {
				if a == "--epochs" {
					e = j.Args[i+1]
				}
			}
			got = append(got, e)
		}
		return got
	}
	for _, c := range []struct{ src, want string }{
		{"epochs: 0\ngrid: {dataset: d, loss: a, seed: 0}", "0"},
		{"epochs: 5\ngrid: {dataset: d, loss: a, seed: 0, epochs: 0}", "0"},
		{"epochs: 0\ngrids: [{dataset: d, loss: a, seed: 0, epochs: 3}]", "3"},
		{"epochs: 5\ngrids: [{dataset: d, loss: a, seed: 0}, {dataset: d, loss: b, seed: 0, epochs: 0}]", "5 0"},
		{"grid: {dataset: d, loss: a, seed: 0}", "unset"},
	} {
		if got := strings.Join(epochsArg(c.src), " "); got != c.want {
			t.Errorf("%q: --epochs %s, want %s", c.src, got, c.want)
		}
	}
}

// Mistakes in a suite file are found before anything runs, all at once,
// each named once with its line: misspelt keys (with the nearest one),
// non-integer integers, the same seed written twice.
func TestParseReportsEveryProblem(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"epoch: 5\ngrid: {dataset: d, loss: a, seed: 0, sampler: spc-2, embeddim: 4}",
			[]string{`line 1: unknown key "epoch" in suite; did you mean "epochs"?`, `line 2: unknown key "embeddim" in grid; did you mean "embed-dim"?`}},
		{"slurm: {cpus-per-task: 1.5}\ngrid: {dataset: d, loss: a, seed: 0}",
			[]string{`line 1: slurm.cpus-per-task: "1.5" is not an integer`}},
		{"grid: {dataset: d, loss: a, seed: [1, \"01\"]}",
			[]string{`grid 1: seeds "1" and "01" are the same seed 1`}},
		{"grids: [{dataset: d, loss: a, seed: 0, epochs: x}]",
			[]string{`line 1: grids[1].epochs: "x" is not an integer`}},
		{"eval: [{name: a, datset: b, emb: e, labels: l}]",
			[]string{`unknown key "datset" in eval[1]; did you mean "dataset"?`}},
	} {
		_, err := Parse([]byte(c.src))
		if err == nil {
			t.Errorf("%q accepted", c.src)
			continue
		}
		for _, w := range c.want {
			if strings.Count(err.Error(), w) != 1 {
				t.Errorf("%q: error\n%v\nlacks (or repeats) %q", c.src, err, w)
			}
		}
	}
}

// Check asks the program's own checks about every grid value and every
// cell's arguments, and lists a problem shared by many cells once.
func TestCheckNamesAndArgs(t *testing.T) {
	s, err := Parse([]byte("extra: --hiden 256\ngrid: {dataset: d, loss: [margin, tripplet], miner: distanse, seed: [0, 1]}"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := s.Jobs("out")
	known := func(kind string, names ...string) func(string) error {
		return func(v string) error {
			if slices.Contains(names, v) {
				return nil
			}
			return fmt.Errorf("unknown %s %q", kind, v)
		}
	}
	err = s.Check(jobs, Checker{Loss: known("loss", "margin", "triplet"), Miner: known("miner", "distance"),
		Args: func(args []string) error {
			if slices.Contains(args, "--hiden") {
				return errors.New("unknown flag --hiden")
			}
			return nil
		}})
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, w := range []string{`grid 1: unknown loss "tripplet"`, `grid 1: unknown miner "distanse"`, `4 cells (first d/margin-distanse/s0): unknown flag --hiden`} {
		if strings.Count(msg, w) != 1 {
			t.Errorf("error\n%s\nlacks (or repeats) %q", msg, w)
		}
	}
}

// A failed run's error line is shown once in the suite's FAIL line.
func TestRunnerFailureLineOnce(t *testing.T) {
	s, _ := Parse([]byte(`grid: {dataset: d, loss: a, seed: 0}`))
	jobs, _ := s.Jobs(t.TempDir())
	var log strings.Builder
	r := &Runner{Bin: "dmlbench", Log: &log, Exec: func(_ context.Context, _ string, _ []string, _, stderr io.Writer) error {
		fmt.Fprintln(stderr, "dmlbench: /data: no such file or directory")
		return errors.New("exit status 1")
	}}
	if _, err := r.Run(context.Background(), jobs); err == nil {
		t.Fatal("no error")
	}
	if n := strings.Count(log.String(), "no such file or directory"); n != 1 {
		t.Fatalf("the error line shows %d times:\n%s", n, log.String())
	}
}

// quiet takes the booleans the YAML decoder takes for a bool field.
func TestParseQuietBooleans(t *testing.T) {
	for _, v := range []string{"true", "false", "yes", "No", "off"} {
		if _, err := Parse([]byte("quiet: " + v + "\ngrid: {dataset: d, loss: a, seed: 0}")); err != nil {
			t.Errorf("quiet: %s: %v", v, err)
		}
	}
	if _, err := Parse([]byte("quiet: maybe\ngrid: {dataset: d, loss: a, seed: 0}")); err == nil {
		t.Error("quiet: maybe accepted")
	}
}

// A grid of 10⁹ cells is counted, not expanded, and refused at once;
// --max-cells raises the limit.
func TestHugeGridRefusedBeforeExpansion(t *testing.T) {
	var l []string
	for i := range 1000 {
		l = append(l, strconv.Itoa(i+1))
	}
	list := "[" + strings.Join(l, ", ") + "]"
	path := filepath.Join(t.TempDir(), "big.yaml")
	spec := "grid:\n  dataset: synthetic\n  loss: margin\n  embed-dim: " + list + "\n  batch-size: " + list + "\n  seed: " + list + "\n"
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, _, _, err := LoadCells(path, "", 0)
	if err == nil || !strings.Contains(err.Error(), "1000000000 cells, more than the limit 100000") {
		t.Fatalf("10⁹ cells: %v", err)
	}
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	// Memory, not time, tells a count from an expansion on any machine:
	// 10⁹ cells laid out would take gigabytes.
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
		t.Fatalf("refusing allocated %.1f MiB", float64(a)/(1<<20))
	}
	small := "grid:\n  dataset: synthetic\n  loss: margin\n  seed: [0, 1, 2]\n"
	if err := os.WriteFile(path, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := LoadCells(path, "", 2); err == nil {
		t.Fatal("3 cells pass a limit of 2")
	}
	if _, _, jobs, err := LoadCells(path, "", 3); err != nil || len(jobs) != 3 {
		t.Fatalf("3 cells, limit 3: %d jobs, %v", len(jobs), err)
	}
}

// Paths with spaces are quoted in #SBATCH directives and the command.
func TestSlurmScriptPathWithSpace(t *testing.T) {
	s := &Spec{Slurm: &SlurmConfig{}}
	sc := s.Script("/my bin/dmlbench", "/my runs/s.yaml", "/my runs/out", []int{0, 1})
	if !strings.Contains(sc, `#SBATCH --output="/my runs/out/slurm/logs/cell%a_job%A.out"`+"\n") {
		t.Fatalf("unquoted --output:\n%s", sc)
	}
	if !strings.Contains(sc, "'/my bin/dmlbench'") || !strings.Contains(sc, "'/my runs/out'") {
		t.Fatalf("unquoted command:\n%s", sc)
	}
}

// A started cell whose settings change in the suite file is refused by
// suite and suite status alike; new cells are added.
func TestSuiteFingerprint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("out: out\nextra: --hidden 64\ngrid:\n  dataset: synthetic\n  loss: margin\n  seed: [0, 1]\n")
	_, out, jobs, err := LoadCells(path, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifest(out, path, jobs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(jobs[0].Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jobs[0].Dir, "run.json"), []byte(`{"status": "done"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	write("out: out\nextra: --hidden 64\ngrid:\n  dataset: synthetic\n  loss: margin\n  seed: [0, 1, 2]\n")
	if _, _, jobs, err := LoadCells(path, "", 0); err != nil || len(jobs) != 3 {
		t.Fatalf("a new seed: %d cells, %v", len(jobs), err)
	}
	write("out: out\nextra: --hidden 128\ngrid:\n  dataset: synthetic\n  loss: margin\n  seed: [0, 1]\n")
	_, _, _, err = LoadCells(path, "", 0)
	if err == nil || !strings.Contains(err.Error(), jobs[0].Name) || strings.Contains(err.Error(), jobs[1].Name) {
		t.Fatalf("changed extra: %v", err)
	}
}

// With Overall set, the log lines of several Run calls count every cell
// of all of them: the progress does not restart with each call.
func TestRunnerOverallProgress(t *testing.T) {
	dir := t.TempDir()
	s, err := Parse([]byte(`grid: {dataset: omniglot, loss: [margin, triplet], seed: [0, 1]}`))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Jobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	var log strings.Builder
	r := &Runner{Bin: "dmlbench", Exec: fakeTrainer(&calls), Log: &log, Overall: &Overall{Total: 4, Begin: time.Now()}}
	for _, batch := range [][]Job{jobs[:2], jobs[2:]} {
		if _, err := r.Run(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"[1/4, ", "[2/4, ", "[3/4, ", "[4/4, "} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "[1/2, ") || r.Overall.Done != 4 {
		t.Fatalf("progress restarted with the second call:\n%s", log.String())
	}
	if p := progress(1, 4, 1, time.Now().Add(-10*time.Second)); !strings.Contains(p, "ETA 30s") {
		t.Fatalf("progress %q, want ETA 30s", p)
	}
}
