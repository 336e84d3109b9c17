package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

// TestEvalRefine: eval --refine DIR on the run's saved test embeddings
// reproduces the run's own final_refined R@1, and refuses a run without an
// MPN and query/gallery input.
func TestEvalRefine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mpn")
	if err := runTrainCLI(t, "--loss", "mpn-ce", "--seed", "1", "--out", dir, "--save-embeddings",
		"--test-time", "reciprocal", "--test-time-k", "4"); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	emb, lab := filepath.Join(dir, "test_emb.npy"), filepath.Join(dir, "test_labels.npy")
	var out, errb bytes.Buffer
	args := []string{"dmlbench", "eval", "--emb", emb, "--labels", lab, "--metrics", "R@1", "--format", "json", "-q",
		"--refine", dir, "--test-time", "reciprocal", "--test-time-k", "4", "--seed", "1"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res struct{ Metrics map[string]float64 }
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Metrics["R@1"] != rec.FinalRefined["R@1"] {
		t.Fatalf("eval --refine R@1 %v, the run's final_refined %v", res.Metrics["R@1"], rec.FinalRefined["R@1"])
	}

	plain := filepath.Join(t.TempDir(), "ms")
	if err := runTrainCLI(t, "--seed", "1", "--out", plain); err != nil {
		t.Fatal(err)
	}
	for _, a := range [][]string{
		{"dmlbench", "eval", "--emb", emb, "--labels", lab, "--refine", plain, "-q"},
		{"dmlbench", "eval", "--emb", emb, "--labels", lab, "--refine", dir, "--test-time", "none", "-q"},
		{"dmlbench", "eval", "--query-emb", emb, "--query-labels", lab, "--gallery-emb", emb, "--gallery-labels", lab, "--refine", dir, "-q"},
	} {
		out.Reset()
		errb.Reset()
		if code := run(a, &out, &errb); code == 0 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", a[5:], code, out.String())
		}
	}
}
