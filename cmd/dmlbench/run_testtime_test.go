package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
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

// TestRunDistill: mpn-distill trains from a finished mpn-ce run given by
// --teacher (teacher config, checkpoint and class ids read back); a missing
// teacher, a teacher without an MPN and --teacher on another loss are errors.
func TestRunDistill(t *testing.T) {
	dir := t.TempDir()
	teacher, plain := filepath.Join(dir, "teacher"), filepath.Join(dir, "ms")
	if err := runTrainCLI(t, "--loss", "mpn-ce", "--seed", "1", "--out", teacher); err != nil {
		t.Fatal(err)
	}
	if err := runTrainCLI(t, "--seed", "1", "--out", plain); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "student")
	if err := runTrainCLI(t, "--loss", "mpn-distill", "--teacher", teacher, "--hyper", "kd=1,imitation=1,relational=0.1",
		"--seed", "2", "--out", out); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "done" || len(r.History) != 2 || !strings.Contains(string(r.Config), `"teacher":`) {
		t.Fatalf("student record: status %s, %d epochs, config %s", r.Status, len(r.History), r.Config)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "mpn-distill"}, "needs a teacher"},
		{[]string{"--loss", "mpn-distill", "--teacher", plain}, "no MPN"},
		{[]string{"--teacher", teacher}, "only by teacher-student"},
		{[]string{"--loss", "mpn-distill", "--teacher", filepath.Join(dir, "nope")}, "teacher"},
	} {
		err := runTrainCLI(t, append(c.args, "--out", filepath.Join(dir, "bad"+c.want[:4]))...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}
