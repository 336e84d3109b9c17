package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// runCLI runs the CLI in-process and returns stdout, stderr and exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"dmlbench"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// writeNPY writes a raw .npy file with the given descr and shape.
func writeNPY(t *testing.T, path, descr string, shape []int, data any) {
	t.Helper()
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	if data != nil {
		binary.Write(&b, binary.LittleEndian, data)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixtureFiles(t *testing.T) (dir, emb, lab string) {
	dir = t.TempDir()
	emb, lab = filepath.Join(dir, "emb.npy"), filepath.Join(dir, "lab.npy")
	x := mat32.Matrix{Rows: 6, Cols: 2, Data: []float32{0, 0, 0, 1, 5, 5, 5, 6, 9, 0, 9, 1}}
	if err := arrays.SaveNPY(emb, x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, []int32{10, 10, 20, 20, 30, 30}); err != nil {
		t.Fatal(err)
	}
	return
}

func TestEvalJSON(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--format", "json", "--k", "1,2", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Metrics    map[string]*float64 `json:"metrics"`
		Convention string              `json:"convention"`
		N, Dim     int
		Classes    int
		Timings    map[string]float64
		Version    string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"R@1", "R@2", "NMI", "F1", "mAP@C", "mAP@1000", "MAP@R", "R-Precision", "AMI", "rho", "dist_ratio"} {
		if _, ok := r.Metrics[k]; !ok {
			t.Errorf("missing key %s", k)
		}
	}
	if *r.Metrics["R@1"] != 1 || *r.Metrics["MAP@R"] != 1 || r.N != 6 || r.Dim != 2 || r.Classes != 3 || r.Convention != "strict" {
		t.Errorf("unexpected result %s", out)
	}
	if _, ok := r.Timings["knn"]; !ok || r.Version == "" {
		t.Errorf("timings/version missing: %s", out)
	}
}

func TestEvalTableAndMarkdown(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, _, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--k", "1", "--metrics", "R@k,MAP@R")
	if code != 0 || !strings.Contains(out, "R@1") || !strings.Contains(out, "MAP@R") || !strings.Contains(out, "100.00") || !strings.Contains(out, "metrics in %") {
		t.Errorf("table output (exit %d):\n%s", code, out)
	}
	out, _, _ = runCLI(t, "eval", "--emb", emb, "--labels", lab, "--k", "1", "--format", "markdown", "--metrics", "R@1")
	if !strings.Contains(out, "| embeddings | R@1 |\n") || !strings.Contains(out, emb+" | 100.00 |\n") {
		t.Errorf("markdown output:\n%s", out)
	}
}

func TestEvalQueryGallery(t *testing.T) {
	dir, emb, lab := fixtureFiles(t)
	q, ql := filepath.Join(dir, "q.npy"), filepath.Join(dir, "ql.txt")
	arrays.SaveNPY(q, mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{0, 0.4, 9, 0.6}})
	os.WriteFile(ql, []byte("30\n10\n"), 0o644)
	// Text labels "30","10" must meet the gallery's numeric 30 and 10.
	out, errs, code := runCLI(t, "eval", "--query-emb", q, "--query-labels", ql, "--gallery-emb", emb, "--gallery-labels", lab,
		"--k", "1", "--metrics", "R@1", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Query 0 (label 30) is nearest to gallery rows of label 10: miss; query 1 (10) nearest to 30: miss.
	if !strings.Contains(out, `"R@1": 0`) {
		t.Errorf("q/g result: %s", out)
	}
}

// Every bad input: one line on stderr naming the file or row, exit 1, nothing on stdout.
func TestEvalBadInput(t *testing.T) {
	dir, emb, lab := fixtureFiles(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	writeNPY(t, p("short.npy"), "<i4", []int{5}, []int32{1, 1, 2, 2, 3})
	writeNPY(t, p("nan.npy"), "<f4", []int{6, 2}, []float32{0, 0, 0, 1, 5, float32(math.NaN()), 5, 6, 9, 0, 9, 1})
	writeNPY(t, p("inf.npy"), "<f8", []int{6, 2}, []float64{0, 0, 0, 1, 5, 5, 5, 6, 9, 0, math.Inf(-1), 1})
	writeNPY(t, p("3d.npy"), "<f4", []int{3, 2, 2}, make([]float32, 12))
	writeNPY(t, p("flt.npy"), "<f4", []int{6}, []float32{1, 1, 2, 2.5, 3, 3})
	writeNPY(t, p("one.npy"), "<i8", []int{6}, []int64{4, 4, 4, 4, 4, 4})
	writeNPY(t, p("int.npy"), "<i8", []int{6, 2}, []int64{0, 0, 0, 1, 5, 5, 5, 6, 9, 0, 9, 1 << 25})
	os.WriteFile(p("empty.npy"), nil, 0o644)
	os.WriteFile(p("text.npy"), []byte("hello"), 0o644)
	arrays.SaveNPY(p("q3.npy"), mat32.Matrix{Rows: 2, Cols: 3, Data: []float32{1, 2, 3, 4, 5, 6}})
	os.WriteFile(p("ql.txt"), []byte("10\n20\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"length mismatch", []string{"--emb", emb, "--labels", p("short.npy")}, "short.npy", 1},
		{"nan row", []string{"--emb", p("nan.npy"), "--labels", lab}, "row 2", 1},
		{"inf row", []string{"--emb", p("inf.npy"), "--labels", lab}, "row 5", 1},
		{"3-D", []string{"--emb", p("3d.npy"), "--labels", lab}, "3d.npy", 1},
		{"float labels", []string{"--emb", emb, "--labels", p("flt.npy")}, "row 3", 1},
		{"single class", []string{"--emb", emb, "--labels", p("one.npy")}, "one label", 1},
		{"integer embeddings beyond 2^24", []string{"--emb", p("int.npy"), "--labels", lab}, "int.npy: row 5 holds 33554432", 1},
		{"empty file", []string{"--emb", p("empty.npy"), "--labels", lab}, "empty.npy", 1},
		{"not npy", []string{"--emb", p("text.npy"), "--labels", lab}, "text.npy", 1},
		{"missing file", []string{"--emb", p("nope.npy"), "--labels", lab}, "nope.npy", 1},
		{"k too large", []string{"--emb", emb, "--labels", lab, "--k", "6"}, "k = 6", 1},
		{"dimension mismatch", []string{"--query-emb", p("q3.npy"), "--query-labels", p("ql.txt"), "--gallery-emb", emb, "--gallery-labels", lab}, "dimension", 1},
		{"no flags", []string{}, "--emb and --labels", 2},
		{"bad k", []string{"--emb", emb, "--labels", lab, "--k", "x"}, "--k", 2},
		{"bad backend", []string{"--emb", emb, "--labels", lab, "--backend", "gpu9"}, `--backend: unknown k-NN backend "gpu9"; did you mean "gpu"?`, 2},
	}
	for _, c := range cases {
		out, errs, code := runCLI(t, append([]string{"eval", "--quiet"}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errs)
		}
		if out != "" {
			t.Errorf("%s: printed on stdout: %q", c.name, out)
		}
		if strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: stderr %q, want one line containing %q", c.name, errs, c.want)
		}
	}
}

// TestEvalExactMetrics: --metrics R@1,MAP@R prints exactly those two in the
// table and in JSON "metrics" (the --k default does not add R@2, R@4, R@8);
// R-Precision and mAP@C, computed with MAP@R, are under "extra".
func TestEvalExactMetrics(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--format", "json", "--metrics", "R@1,MAP@R", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct{ Metrics, Extra map[string]*float64 }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(r.Metrics) != 2 || r.Metrics["R@1"] == nil || r.Metrics["MAP@R"] == nil {
		t.Errorf("metrics %v, want exactly R@1 and MAP@R", r.Metrics)
	}
	if len(r.Extra) != 2 || r.Extra["R-Precision"] == nil || r.Extra["mAP@C"] == nil {
		t.Errorf("extra %v, want R-Precision and mAP@C", r.Extra)
	}
	out, errs, code = runCLI(t, "eval", "--emb", emb, "--labels", lab, "--metrics", "R@1,MAP@R", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, absent := range []string{"R@2", "R@8", "R-Precision", "mAP@C"} {
		if strings.Contains(out, absent) {
			t.Errorf("table shows %s, not asked for:\n%s", absent, out)
		}
	}
}

// TestEvalUndefinedMean: every query lone under --compat pml: R@1 and
// MAP@R are means over no query, null in JSON and n/a in the table, with a
// warning on stderr.
func TestEvalUndefinedMean(t *testing.T) {
	dir := t.TempDir()
	emb, lab := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	if err := arrays.SaveNPY(emb, mat32.Matrix{Rows: 3, Cols: 1, Data: []float32{0, 1, 5}}); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--compat", "pml", "--metrics", "R@1,MAP@R", "--format", "json")
	if code != 0 || !strings.Contains(out, `"R@1": null`) || !strings.Contains(out, `"MAP@R": null`) || !strings.Contains(errs, "undefined") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	out, _, code = runCLI(t, "eval", "--emb", emb, "--labels", lab, "--compat", "pml", "--metrics", "R@1,MAP@R", "--quiet")
	if code != 0 || strings.Count(out, "n/a") != 2 {
		t.Errorf("exit %d, table without two n/a:\n%s", code, out)
	}
}

// TestEvalKNeedsRecallFamily: --k with a --metrics list that does not name
// R@k would be ignored: a usage error instead; with R@k it sets the ks.
func TestEvalKNeedsRecallFamily(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	if out, _, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--metrics", "R@1,MAP@R", "--k", "1,5"); code != 2 || out != "" {
		t.Errorf("--k with R@1,MAP@R: exit %d, stdout %q", code, out)
	}
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--metrics", "R@k,MAP@R", "--k", "1,5", "--quiet")
	if code != 0 || !strings.Contains(out, "R@5") || strings.Contains(out, "R@2") {
		t.Errorf("exit %d: %s\n%s", code, errs, out)
	}
}
