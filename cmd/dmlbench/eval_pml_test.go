package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

type evalJSON struct {
	Metrics  map[string]*float64 `json:"metrics"`
	N        int                 `json:"n"`
	Queries  int                 `json:"queries"`
	Gallery  int                 `json:"gallery"`
	Average  string              `json:"average"`
	Warnings []string            `json:"warnings"`
	PerClass []struct {
		Class   string             `json:"class"`
		Queries int                `json:"queries"`
		Metrics map[string]float64 `json:"metrics"`
	} `json:"per_class"`
}

func evalJSONOut(t *testing.T, args ...string) evalJSON {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"eval", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r evalJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return r
}

func metricIs(t *testing.T, r evalJSON, key string, want float64) {
	t.Helper()
	v := r.Metrics[key]
	if v == nil || math.Abs(*v-want) > 1e-12 {
		t.Errorf("%s = %v, want %v", key, v, want)
	}
}

// PyTorch files straight from torch.save (fixtures/arrays/testdata/gen_torch.py).
func TestEvalTorchFile(t *testing.T) {
	pt := filepath.Join("..", "..", "fixtures", "arrays", "testdata", "torch_dict.pt")
	r := evalJSONOut(t, "--emb", pt+":embeddings", "--labels", pt+":labels", "--k", "1", "--metrics", "R@1", "--quiet")
	if r.N != 4 || r.Queries != 4 || r.Gallery != 3 {
		t.Errorf("n %d queries %d gallery %d", r.N, r.Queries, r.Gallery)
	}
	// String labels in .npy work like a text label file.
	str := filepath.Join("..", "..", "fixtures", "arrays", "testdata", "labels_str.npy")
	r = evalJSONOut(t, "--emb", pt+":embeddings", "--labels", str, "--k", "1", "--metrics", "R@1", "--per-class", "--quiet")
	if len(r.PerClass) != 3 || r.PerClass[0].Class != "cat" || r.PerClass[2].Class != "émeu" {
		t.Errorf("per_class %+v", r.PerClass)
	}
}

// PML's first end-to-end case with integer embeddings (np.arange(10)[:, None]):
// the same file as queries and as gallery, every label distinct.
func TestEvalIntegerEmbeddingsPML(t *testing.T) {
	dir := t.TempDir()
	e, l := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	writeNPY(t, e, "<i8", []int{10, 1}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	writeNPY(t, l, "<i8", []int{10}, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	r := evalJSONOut(t, "--query-emb", e, "--query-labels", l, "--gallery-emb", e, "--gallery-labels", l,
		"--compat", "pml", "--k", "1", "--metrics", "R@1,R-Precision,MAP@R")
	for _, k := range []string{"R@1", "R-Precision", "MAP@R"} {
		metricIs(t, r, k, 1)
	}
}

// PML's ref_includes_query case: the queries are rows 0, 2, …, 18 of the
// reference arange(20)/2.
func TestEvalQueryRowsCLI(t *testing.T) {
	dir := t.TempDir()
	e, l, idx := filepath.Join(dir, "ref.npy"), filepath.Join(dir, "ref_labels.npy"), filepath.Join(dir, "q.npy")
	x := make([]float32, 20)
	y := make([]int32, 20)
	rows := make([]int64, 10)
	for i := range x {
		x[i] = float32(i) / 2
		y[i] = 1
		if i%2 == 0 {
			y[i] = int32(i / 2)
			rows[i/2] = int64(i)
		}
	}
	arrays.SaveNPY(e, mat32.Matrix{Rows: 20, Cols: 1, Data: x})
	arrays.SaveLabelsNPY(l, y)
	writeNPY(t, idx, "<i8", []int{10}, rows)
	r := evalJSONOut(t, "--emb", e, "--labels", l, "--query-rows", idx, "--compat", "pml", "--k", "1", "--metrics", "R@1,R-Precision,MAP@R", "--quiet")
	metricIs(t, r, "R@1", 1)
	metricIs(t, r, "R-Precision", 0.5)
	metricIs(t, r, "MAP@R", (1+2.0/2+3.0/5+4.0/7+5.0/9)/10)
	if r.Queries != 10 || r.Gallery != 19 {
		t.Errorf("queries %d gallery %d", r.Queries, r.Gallery)
	}
	writeNPY(t, idx, "<i8", []int{2}, []int64{3, 20})
	_, errs, code := runCLI(t, "eval", "--emb", e, "--labels", l, "--query-rows", idx)
	if code != 1 || !strings.Contains(errs, "entry 1 is row 20, but --emb has rows 0..19") {
		t.Errorf("out-of-range row: exit %d %q", code, errs)
	}
}

// One query against a gallery; a lone one gives undefined (null / n/a) means.
func TestEvalOneQueryAndUndefined(t *testing.T) {
	dir, emb, lab := fixtureFiles(t)
	q, ql := filepath.Join(dir, "q.npy"), filepath.Join(dir, "ql.txt")
	arrays.SaveNPY(q, mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{0, 0.4}})
	os.WriteFile(ql, []byte("10\n"), 0o644)
	r := evalJSONOut(t, "--query-emb", q, "--query-labels", ql, "--gallery-emb", emb, "--gallery-labels", lab, "--k", "1", "--metrics", "R@1,MAP@R")
	metricIs(t, r, "R@1", 1)
	metricIs(t, r, "MAP@R", 1)
	if r.Queries != 1 || r.Gallery != 6 {
		t.Errorf("queries %d gallery %d", r.Queries, r.Gallery)
	}
	os.WriteFile(ql, []byte("77\n"), 0o644)
	args := []string{"--query-emb", q, "--query-labels", ql, "--gallery-emb", emb, "--gallery-labels", lab, "--k", "1", "--metrics", "R@1,MAP@R", "--compat", "pml"}
	r = evalJSONOut(t, args...)
	if r.Metrics["R@1"] != nil || r.Metrics["MAP@R"] != nil {
		t.Errorf("all-lone pml: %v, want null", r.Metrics)
	}
	outFile := filepath.Join(dir, "r.json")
	if _, errs, code := runCLI(t, append([]string{"eval", "--quiet", "--out", outFile}, args...)...); code != 0 {
		t.Fatalf("--out with undefined values: exit %d %s", code, errs)
	}
	if b, err := os.ReadFile(outFile); err != nil || !strings.Contains(string(b), `"R@1": null`) {
		t.Errorf("--out file: %v %s", err, b)
	}
	out, errs, code := runCLI(t, append([]string{"eval"}, args...)...)
	if code != 0 || !strings.Contains(out, "n/a") || !strings.Contains(errs, "undefined") || !strings.Contains(out, "1 queries, gallery of 6") {
		t.Errorf("table: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestEvalAverageAndPMLK(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	r := evalJSONOut(t, "--emb", emb, "--labels", lab, "--k", "1", "--metrics", "R@1,MRR", "--average", "per-class", "--per-class", "--quiet")
	if r.Average != "per-class" || len(r.PerClass) != 3 || r.PerClass[0].Class != "10" || r.PerClass[0].Queries != 2 {
		t.Errorf("average %q per_class %+v", r.Average, r.PerClass)
	}
	metricIs(t, r, "MRR", 1)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pml-k", "2"}, "needs --compat pml"},
		{[]string{"--pml-k", "0", "--compat", "pml"}, "positive"},
		{[]string{"--pml-k", "max", "--compat", "pml"}, "max_bin_count"},
		{[]string{"--average", "macro"}, "--average"},
		{[]string{"--protocol", "inshop"}, "--query-emb"},
		{[]string{"--protocol", "sop", "--k", "1"}, "sets --k 1,10,100,1000"},
		{[]string{"--protocol", "imagenet"}, "unknown (have: cars, cub, inshop, sop)"},
	} {
		out, errs, code := runCLI(t, append([]string{"eval", "--emb", emb, "--labels", lab}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d stdout %q stderr %q, want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
	r = evalJSONOut(t, "--emb", emb, "--labels", lab, "--compat", "pml", "--pml-k", "1", "--metrics", "MAP@R,mean_average_precision")
	metricIs(t, r, "mean_average_precision", 1)
	r = evalJSONOut(t, "--emb", emb, "--labels", lab, "--compat", "pml", "--pml-k", "max_bin_count", "--metrics", "MAP@R,mean_average_precision")
	metricIs(t, r, "mean_average_precision", 1)
	metricIs(t, r, "MAP@R", 1)
}

// --protocol sets the ks and says when the files are not the standard split.
func TestEvalProtocol(t *testing.T) {
	dir := t.TempDir()
	e, l := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	n := 40
	x := make([]float32, n)
	y := make([]int32, n)
	for i := range x {
		x[i] = float32(i)
		y[i] = int32(i / 10)
	}
	arrays.SaveNPY(e, mat32.Matrix{Rows: n, Cols: 1, Data: x})
	arrays.SaveLabelsNPY(l, y)
	r := evalJSONOut(t, "--emb", e, "--labels", l, "--protocol", "cub", "--metrics", "R@k")
	for _, k := range []string{"R@1", "R@2", "R@4", "R@8"} {
		if r.Metrics[k] == nil {
			t.Errorf("--protocol cub: missing %s (%v)", k, r.Metrics)
		}
	}
	if len(r.Metrics) != 4 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "40 items, but the CUB-200-2011 test classes 101–200 has 5924") {
		t.Errorf("metrics %v warnings %v", r.Metrics, r.Warnings)
	}
	out, _, code := runCLI(t, "eval", "--emb", e, "--labels", l, "--protocol", "cub", "--metrics", "R@k", "--quiet")
	if code != 0 || !strings.Contains(out, "40 items (each searches the other 39)") {
		t.Errorf("table footer:\n%s", out)
	}
}

// --per-class names classes by their original labels in query/gallery mode.
func TestEvalPerClassQueryGallery(t *testing.T) {
	dir, emb, lab := fixtureFiles(t)
	q, ql := filepath.Join(dir, "q.npy"), filepath.Join(dir, "ql.txt")
	arrays.SaveNPY(q, mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{0, 0.4, 9, 0.6}})
	os.WriteFile(ql, []byte("30\n10\n"), 0o644)
	r := evalJSONOut(t, "--query-emb", q, "--query-labels", ql, "--gallery-emb", emb, "--gallery-labels", lab,
		"--k", "1", "--metrics", "R@1", "--per-class", "--quiet")
	if len(r.PerClass) != 2 {
		t.Fatalf("per_class %+v", r.PerClass)
	}
	got := map[string]int{}
	for _, c := range r.PerClass {
		got[c.Class] = c.Queries
	}
	if got["30"] != 1 || got["10"] != 1 {
		t.Errorf("per_class classes %v, want 10 and 30", got)
	}
}
