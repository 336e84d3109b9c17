package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// The hand-worked set of metrics.TestBinarizeHammingRanking: float L2
// gives R@1 = 1/2, Hamming on the thresholded codes R@1 = 1; the codes are
// two pairs of identical vectors, so 2-means on them recovers the classes
// (NMI = 1) when its initial centroids come from different pairs: seed 3
// draws rows 2 and 1 (faiss's rand_perm(4, 3 + 1)). Seed 1234 draws rows 3
// and 2, one pair, and faiss's k-means then never separates the classes:
// the empty cluster's split perturbs the shared centroid (0, 1, 1)
// symmetrically, both codes stay equidistant from the twins and go to the
// lower index (python3-faiss 1.7.3 gives NMI 0 there too).
func TestEvalBinarize(t *testing.T) {
	dir := t.TempDir()
	emb, lab := filepath.Join(dir, "e.npy"), filepath.Join(dir, "l.npy")
	x := mat32.Matrix{Rows: 4, Cols: 3, Data: []float32{0.1, 0.1, 0.1, 2, 2, 2, -0.05, 0.1, 0.1, -2, 0.1, 0.1}}
	if err := arrays.SaveNPY(emb, x); err != nil {
		t.Fatal(err)
	}
	if err := arrays.SaveLabelsNPY(lab, []int32{0, 0, 1, 1}); err != nil {
		t.Fatal(err)
	}
	score := func(args ...string) map[string]float64 {
		t.Helper()
		out, errs, code := runCLI(t, append([]string{"eval", "--emb", emb, "--labels", lab, "--format", "json", "-q", "--metrics", "R@1,NMI", "--k", "1"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var r struct{ Metrics map[string]float64 }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Metrics
	}
	if m := score(); m["R@1"] != 0.5 {
		t.Fatalf("float R@1 = %v, want 0.5", m["R@1"])
	}
	if m := score("--binarize", "--seed", "3"); m["R@1"] != 1 || math.Abs(m["NMI"]-1) > 1e-12 {
		t.Fatalf("binarized: %v, want R@1 = NMI = 1", m)
	}
	// Query/gallery: the gallery is thresholded too.
	out, errs, code := runCLI(t, "eval", "--query-emb", emb, "--query-labels", lab, "--gallery-emb", emb, "--gallery-labels", lab,
		"--binarize", "--metrics", "R@1", "--k", "1", "--format", "markdown", "-q")
	if code != 0 || !strings.Contains(out, "| 100.00 |\n") {
		t.Fatalf("query/gallery (exit %d): %s %s", code, out, errs)
	}
	_, errs, code = runCLI(t, "eval", "--emb", emb, "--labels", lab, "--binarize", "--distance", "cosine")
	if code == 0 || !strings.Contains(errs, "Hamming") {
		t.Fatalf("--binarize --distance cosine accepted (exit %d): %s", code, errs)
	}
	out, _, _ = runCLI(t, "eval", "--help")
	if !strings.Contains(out, "--binarize") {
		t.Fatal("--help does not mention --binarize")
	}
}
