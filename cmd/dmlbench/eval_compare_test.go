package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const featDir = "../../docs/examples/features/"

// eval --per-query writes one row per query; compare of a file with itself
// gives B − A = 0 and p = 1 in its JSON; misuse is one line, exit 2.
func TestPerQueryAndCompareCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pq := filepath.Join(dir, "pq.csv")
	_, errs, code := runCLI(t, "eval", "--emb", featDir+"test_emb.npy", "--labels", featDir+"test_labels.npy",
		"--metrics", "R@1,MAP@R", "--per-query", pq, "-q")
	if code != 0 {
		t.Fatalf("eval --per-query: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 201 || lines[0] != "index,label,R@1,MAP@R" {
		t.Fatalf("%d lines, header %q", len(lines), lines[0])
	}
	out, errs, code := runCLI(t, "compare", "--emb", featDir+"test_emb.npy", "--emb", featDir+"test_emb.npy",
		"--labels", featDir+"test_labels.npy", "--metrics", "R@1,MAP@R,NMI", "--format", "json", "--resamples", "200", "-q")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	var got struct {
		Resamples int `json:"resamples"`
		Metrics   map[string]struct {
			A, B, Diff *float64
			CI         *[2]float64
			P          *float64
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"R@1", "MAP@R"} {
		m := got.Metrics[k]
		if m.Diff == nil || *m.Diff != 0 || m.P == nil || *m.P != 1 || m.CI == nil || m.CI[0] != 0 || m.CI[1] != 0 {
			t.Errorf("%s: %s", k, out)
		}
	}
	if nmi := got.Metrics["NMI"]; nmi.P != nil || nmi.CI != nil || nmi.A == nil || got.Resamples != 200 {
		t.Errorf("NMI is not tested but has a p or lacks its value: %s", out)
	}
	for _, args := range [][]string{
		{"compare", "--emb", featDir + "test_emb.npy", "--labels", featDir + "test_labels.npy"},
		{"compare", "--emb", featDir + "test_emb.npy", "--emb", featDir + "train_emb.npy", "--labels", featDir + "test_labels.npy", "--resamples", "0"},
		{"eval", "--emb", featDir + "test_emb.npy", "--emb", featDir + "test_emb.npy", "--labels", featDir + "test_labels.npy", "--per-query", pq},
	} {
		_, errs, code := runCLI(t, args...)
		if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q: want one line, non-zero", args, code, errs)
		}
	}
}

// show writes one HTML file (labels and distances without pictures);
// --worst 0 --random 0 and pictures from a data set of another size are
// one-line errors.
func TestShowCLI(t *testing.T) {
	t.Parallel()
	page := filepath.Join(t.TempDir(), "show.html")
	args := []string{"show", "--emb", featDir + "test_emb.npy", "--labels", featDir + "test_labels.npy", "--top", "3", "--worst", "2", "--random", "2"}
	if _, errs, code := runCLI(t, append(args, "--out", page)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `class="card ok"`) + strings.Count(string(b), `class="card bad"`); n != 4*3 || strings.Contains(string(b), "<img") {
		t.Errorf("%d retrieval cards (want 12), images %v", n, strings.Contains(string(b), "<img"))
	}
	for _, extra := range [][]string{{"--worst", "0", "--random", "0"}, {"--dataset", "omniglot"}} {
		_, errs, code := runCLI(t, append(append(args, "--out", page), extra...)...)
		if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q", extra, code, errs)
		}
	}
}

// data audit: a clean split exits 0; test rows copied from training rows
// are reported and exit 1 with one line on stderr.
func TestDataAuditCLI(t *testing.T) {
	t.Parallel()
	out, errs, code := runCLI(t, "data", "audit", "--dataset", "dir:"+featDir)
	if code != 0 || !strings.Contains(out, "bit for bit): 0") {
		t.Fatalf("clean split: exit %d\n%s%s", code, out, errs)
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{"train_emb.npy": "train_emb.npy", "train_labels.npy": "train_labels.npy", "test_labels.npy": "test_labels.npy"} {
		b, err := os.ReadFile(featDir + src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(featDir + "train_emb.npy")
	if err := os.WriteFile(filepath.Join(dir, "test_emb.npy"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, "data", "audit", "--dataset", "dir:"+dir)
	if code != 1 || !strings.Contains(out, "LEAK test rows equal to a training row (bit for bit): 200") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("leaky split: exit %d\n%s%s", code, out, errs)
	}
}
