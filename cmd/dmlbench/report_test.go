package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports/plots"
	"github.com/dmlbench/dmlbench/spectra"
)

const testRuns = "../../reports/testdata/runs"

func TestReportCommand(t *testing.T) {
	// Flags after the path (urfave/cli stops at the first argument; reportArgs re-parses).
	out, errs, code := runCLI(t, "report", testRuns, "--format", "markdown", "--group-by", "loss", "--metrics", "R@1,F1", "--baseline", "triplet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"### cub200", "| margin | 3 | **62.00 ± 2.00** | +3.00 (p=0.313) |", "+3.10† (p<0.001)", "1 unfinished run(s) skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	// Same report with flags first, CSV, to a file.
	dir := t.TempDir()
	f := filepath.Join(dir, "r.csv")
	if _, errs, code := runCLI(t, "report", "--format=csv", "--reference", "roth2020", "--reference-dataset", "cub", "--out", f, testRuns); code != 0 {
		t.Fatalf("csv exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(f)
	if !strings.Contains(string(b), "published,Imagenet") || !strings.HasPrefix(string(b), "dataset,kind,method,") {
		t.Fatalf("csv:\n%s", b)
	}
	// LaTeX standalone, terminal.
	if out, _, code := runCLI(t, "report", testRuns, "-f", "latex", "--standalone"); code != 0 || !strings.Contains(out, `\toprule`) || !strings.Contains(out, `\end{document}`) {
		t.Fatalf("latex exit %d:\n%s", code, out)
	}
	if out, _, code := runCLI(t, "report", testRuns, "--color", "never"); code != 0 || !strings.Contains(out, "┌") {
		t.Fatalf("terminal exit %d:\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"report"},
		{"report", testRuns, "--format", "html"},
		{"report", testRuns, "--alpha", "2"},
		{"report", testRuns, "--ci", "95"},
		{"report", testRuns, "--source", "worst"},
		{"report", testRuns, "--reference-rows", "x"},
		{"report", testRuns, "--color", "pink"},
		{"report", testRuns, "--nosuchflag"},
		{"report", testRuns, "--format"},
	} {
		if _, _, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	for _, bad := range [][]string{
		{"report", filepath.Join(dir, "missing")},
		{"report", testRuns, "--baseline", "nosuch"},
		{"report", testRuns, "--reference", "nosuch"},
	} {
		if _, _, code := runCLI(t, bad...); code != 1 {
			t.Errorf("%v: exit %d, want 1", bad, code)
		}
	}
	// An unknown --group-by key: a usage error, one line naming the valid
	// keys, nothing on stdout.
	out, errs, code = runCLI(t, "report", testRuns, "--group-by", "nope")
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "embed_dim, loss, miner, sampler") {
		t.Errorf("--group-by nope: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestPlotCommands(t *testing.T) {
	dir := t.TempDir()
	cub := testRuns + "/cub200"
	for _, args := range [][]string{
		{"plot", "spectrum", cub, "--group-by", "loss", "--top", "10", "--out", filepath.Join(dir, "sp.png")},
		{"plot", "rho", cub, "--group-by", "loss", "--out", filepath.Join(dir, "rho.svg")},
		{"plot", "recall", cub, "--out", filepath.Join(dir, "rec.pdf")},
		{"plot", "curves", cub, "--group-by", "loss", "--out", filepath.Join(dir, "cur.png"), "--title", "x"},
		{"plot", "sweep", testRuns + "/omniglot", "--param", "embed-dim", "--out", filepath.Join(dir, "sw.png")},
	} {
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		p := args[len(args)-1]
		if args[1] == "curves" {
			p = args[len(args)-3]
		}
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, bad := range [][]string{
		{"plot", "rho", cub},
		{"plot", "rho", "--out", filepath.Join(dir, "x.png")},
		{"plot", "sweep", cub, "--out", filepath.Join(dir, "x.png")},
		{"plot", "spectrum", "--out", filepath.Join(dir, "x.png")},
		{"plot", "spectrum", cub, "--normalize", "l1", "--out", filepath.Join(dir, "x.png")},
		{"plot", "spectrum", "--emb", "a.npy", "--per-class", "--out", filepath.Join(dir, "x.png")},
		{"plot", "recall", cub, "--width", "0", "--out", filepath.Join(dir, "x.png")},
	} {
		if _, _, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if _, _, code := runCLI(t, "plot", "recall", cub, "--out", filepath.Join(dir, "x.bmp")); code != 1 {
		t.Errorf("bmp: exit %d, want 1", code)
	}
}

// testEmbeddings writes 3 classes × 8 points in 6-D (Gaussian around class
// centres, seeded) and returns the file paths and the matrix.
func testEmbeddings(t *testing.T, dir string) (string, string, mat32.Matrix, []int32) {
	rng := rand.New(rand.NewPCG(5, 5))
	n, d := 24, 6
	x := make([]float32, n*d)
	labels := make([]int32, n)
	for i := range n {
		labels[i] = int32(i % 3)
		for j := range d {
			c := 0.0
			if j == int(labels[i]) {
				c = 3
			}
			x[i*d+j] = float32(c + rng.NormFloat64())
		}
	}
	m, _ := mat32.Matrix{Rows: n, Cols: d, Data: x}, error(nil)
	ep, lp := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	if err := arrays.SaveNPY(ep, m); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lp, labels); err != nil {
		t.Fatal(err)
	}
	return ep, lp, m, labels
}

func TestSpectraCommand(t *testing.T) {
	dir := t.TempDir()
	ep, lp, m, labels := testEmbeddings(t, dir)
	sv, _ := spectra.SingularValues(m)
	want, _ := spectra.Rho(sv, 1)
	out, errs, code := runCLI(t, "spectra", "--emb", ep, "--labels", lp, "--out", filepath.Join(dir, "s.png"), "--top", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, fmt.Sprintf("rho@1 %.6f\n", want)) {
		t.Fatalf("output %q, want rho@1 %.6f", out, want)
	}
	if st, err := os.Stat(filepath.Join(dir, "s.png")); err != nil || st.Size() < 1000 {
		t.Fatal("no plot")
	}
	out, _, code = runCLI(t, "spectra", "--emb", ep, "--labels", lp, "--format", "json", "--m", "2")
	var res plots.SpectrumSummary
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("json exit %d: %s", code, out)
	}
	want2, _ := spectra.Rho(sv, 2)
	pc, _, _ := spectra.PerClass(m, labels)
	if res.Rho == nil || math.Abs(*res.Rho-want2) > 1e-12 || res.N != 24 || res.Dim != 6 || res.Classes != 3 || len(res.PerClass) != len(pc) {
		t.Fatalf("json %+v", res)
	}
	// plot spectrum of embedding files, per class.
	if _, errs, code := runCLI(t, "plot", "spectrum", "--emb", ep, "--labels", lp, "--per-class", "--out", filepath.Join(dir, "pc.svg")); code != 0 {
		t.Fatalf("plot spectrum --emb: %d %s", code, errs)
	}
	for _, bad := range [][]string{
		{"spectra"},
		{"spectra", "--emb", ep, "--m", "0"},
		{"spectra", "--emb", ep, "--format", "xml"},
		{"spectra", "--emb", ep, "extra"},
	} {
		if _, _, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if _, _, code := runCLI(t, "spectra", "--emb", filepath.Join(dir, "none.npy")); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
}

// TestSuiteCommand runs a suite end to end through a fake trainer script
// (--bin), so the exec path, run directories, resumption and the eval
// capture are exercised without training.
func TestSuiteCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script trainer")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fake.sh")
	os.WriteFile(script, []byte(`#!/bin/sh
# fake dmlbench: "run ... --out DIR" writes DIR/run.json; "eval" prints JSON.
if [ "$1" = eval ]; then echo '{"metrics":{"R@1":0.5},"n":4}'; exit 0; fi
out=""; loss=""
while [ $# -gt 0 ]; do
  case "$1" in --out) out="$2"; shift;; --loss) loss="$2"; shift;; esac; shift
done
[ "$loss" = broken ] && { echo "boom" >&2; exit 3; }
printf '{"schema":1,"dataset":"d","method":{"loss":"%s"},"status":"done","final":{"R@1":0.4}}' "$loss" > "$out/run.json"
`), 0o755)
	suiteFile := filepath.Join(dir, "s.yaml")
	os.WriteFile(suiteFile, []byte(`out: runs
grid: {dataset: d, loss: [a, b], embed-dim: 16, seed: [0, 1]}
eval: [{name: base, dataset: d, emb: e.npy, labels: l.npy}]
`), 0o644)
	out, errs, code := runCLI(t, "suite", suiteFile, "--dry-run", "--bin", script)
	if code != 0 || !strings.Contains(out, "5 runs, 5 to do") || !strings.Contains(out, "d/a-d16/s0") {
		t.Fatalf("dry run %d: %s %s", code, out, errs)
	}
	_, errs, code = runCLI(t, "suite", suiteFile, "--bin", script, "--jobs", "2")
	if code != 0 || !strings.Contains(errs, "5 done now") {
		t.Fatalf("suite exit %d: %s", code, errs)
	}
	r, err := record.Read(filepath.Join(dir, "runs/d/a-d16/s1/run.json"))
	if err != nil || r.Method["embed_dim"] != "16" || r.Method["loss"] != "a" {
		t.Fatalf("run.json %+v %v (grid axes merged into method)", r, err)
	}
	if _, err := record.Read(filepath.Join(dir, "runs/d/base/s0/run.json")); err != nil {
		t.Fatal(err)
	}
	_, errs, code = runCLI(t, "suite", suiteFile, "--bin", script)
	if code != 0 || !strings.Contains(errs, "0 done now, 5 done before") {
		t.Fatalf("resume exit %d: %s", code, errs)
	}
	// A failing run: exit 1, log.txt holds its stderr.
	os.WriteFile(suiteFile, []byte("out: runs2\ngrid: {dataset: d, loss: broken, seed: 0}\n"), 0o644)
	if _, _, code := runCLI(t, "suite", suiteFile, "--bin", script); code != 1 {
		t.Fatalf("failing suite exit %d", code)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "runs2/d/broken/s0/log.txt"))
	if !bytes.Contains(b, []byte("boom")) {
		t.Fatalf("log.txt %q", b)
	}
	for _, bad := range [][]string{{"suite"}, {"suite", suiteFile, "--jobs", "0"}, {"suite", "a", "b"}} {
		if _, _, code := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if _, _, code := runCLI(t, "suite", filepath.Join(dir, "nope.yaml")); code != 1 {
		t.Errorf("missing suite file: exit %d", code)
	}
}

// report --metrics takes eval's names and aliases (mapr is MAP@R, r@1 is
// R@1); an unknown name, or a metric no run holds, is a usage error that
// lists the valid names instead of an empty column.
func TestReportMetricNames(t *testing.T) {
	runs := "../../docs/examples/omniglot/runs"
	out, errs, code := runCLI(t, "report", runs, "--format", "markdown", "--metrics", "r@1,MAPR")
	if code != 0 || !strings.Contains(out, "| Method | n | R@1 | MAP@R |") {
		t.Errorf("aliases: exit %d, %s\n%s", code, errs, out)
	}
	// pytorch-metric-learning's names (AccuracyCalculator v2.8.1).
	out, errs, code = runCLI(t, "report", runs, "--format", "markdown", "--metrics", "precision_at_1,mean_average_precision_at_r,r_precision,NMI")
	if code != 0 || !strings.Contains(out, "| Method | n | R@1 | MAP@R | R-Precision | NMI |") {
		t.Errorf("pml names: exit %d, %s\n%s", code, errs, out)
	}
	for _, c := range []struct{ metrics, want string }{
		{"R@1,MAPX", `unknown metric "MAPX"; the runs hold R@1, R@2`},
		{"R@1,MAPX", "MAP@R (mapr, map_at_r, mean_average_precision_at_r)"},
		{"P@5", "no run holds P@5"},
		{"mrr", "no run holds MRR"},
	} {
		out, errs, code := runCLI(t, "report", runs, "--metrics", c.metrics)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("--metrics %s: exit %d, stdout %d bytes, stderr %q; want exit 2 and %q", c.metrics, code, len(out), errs, c.want)
		}
	}
}
