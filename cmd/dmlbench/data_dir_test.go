package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataExportDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	_, errs, code := runCLI(t, "data", "export", "--dataset", "synthetic", "--classes", "8", "--per-class", "3", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"train_emb.npy", "train_labels.npy", "test_emb.npy", "test_labels.npy"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, errs, code := runCLI(t, "data", "export", "--dataset", "synthetic", "--dir", dir, "--split", "test"); code != 2 || !strings.Contains(errs, "--dir writes both splits") {
		t.Errorf("--dir with --split: exit %d, %q", code, errs)
	}
	if _, errs, code := runCLI(t, "data", "export", "--dataset", "synthetic"); code != 2 || !strings.Contains(errs, "--out DIR") {
		t.Errorf("neither --out nor --dir: exit %d, %q", code, errs)
	}
}
