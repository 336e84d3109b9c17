package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
)

// TestDataExportClassSizes: --class-sizes and --rows reach the synthetic
// generator (the test split holds its half of the rows and classes), and a
// malformed --class-sizes is a one-line usage error.
func TestDataExportClassSizes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, errs, code := runCLI(t, "data", "export", "--dataset", "synthetic", "--classes", "20", "--rows", "300",
		"--class-sizes", "4:40", "--dim", "8", "--spread", "0.2", "--normalize", "--seed", "3", "--out", dir)
	if code != 0 || !strings.Contains(out, "(150×8)") || !strings.Contains(out, "10 classes") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	labels, _, err := arrays.LoadLabels(filepath.Join(dir, "labels.npy"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[int32]int{}
	for _, l := range labels {
		count[l]++
	}
	for c, m := range count {
		if m < 4 || m > 40 {
			t.Errorf("class %d has %d rows, want 4..40", c, m)
		}
	}
	for _, bad := range []string{"4", "0:3", "5:4", "a:b"} {
		_, errs, code := runCLI(t, "data", "export", "--dataset", "synthetic", "--class-sizes", bad, "--out", dir)
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--class-sizes") {
			t.Errorf("--class-sizes %s: exit %d, stderr %q", bad, code, errs)
		}
	}
}
