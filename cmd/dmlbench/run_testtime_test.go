package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/record"
)

// TestRunTestTime: --test-time adds final_refined (same metric keys as
// final) and method.test_time, leaving final backbone-only; every mode runs;
// a loss without an MPN and an unknown mode are usage errors.
func TestRunTestTime(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := runTrainCLI(t, "--loss", "mpn-ce", "--seed", "1", "--out", plain); err != nil {
		t.Fatal(err)
	}
	base, err := record.Read(filepath.Join(plain, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if base.FinalRefined != nil || base.Method["test_time"] != "" {
		t.Fatalf("run without --test-time has final_refined %v, method %v", base.FinalRefined, base.Method)
	}
	for _, mode := range []string{"reciprocal", "knn", "cluster"} {
		out := filepath.Join(dir, mode)
		if err := runTrainCLI(t, "--loss", "mpn-ce", "--seed", "1", "--out", out, "--test-time", mode, "--test-time-k", "4"); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		r, err := record.Read(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Method["test_time"], mode+"(") || len(r.FinalRefined) != len(r.Final) {
			t.Fatalf("%s: method %v, final %v, final_refined %v", mode, r.Method, r.Final, r.FinalRefined)
		}
		if !sameMetrics(r.Final, base.Final) {
			t.Errorf("%s: final changed with --test-time: %v vs %v", mode, r.Final, base.Final)
		}
	}
	for _, args := range [][]string{
		{"--test-time", "reciprocal"}, // multisimilarity has no MPN
		{"--loss", "mpn-ce", "--test-time", "bogus"},
	} {
		if err := runTrainCLI(t, append(args, "--out", filepath.Join(dir, "bad"))...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
