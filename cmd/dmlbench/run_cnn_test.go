package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/trainers"
)

func TestRunArchCNN(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cnn")
	args := []string{"dmlbench", "run", "--quiet", "--dataset", "omniglot", "--size", "14", "--arch", "cnn", "--channels", "4,8",
		"--loss", "multisimilarity", "--sampler", "spc-4", "--epochs", "1", "--iters-per-epoch", "2", "--batch-size", "32",
		"--embed-dim", "8", "--metrics", "R@1", "--seed", "1", "--out", out}
	if err := newApp().Run(args); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg trainers.Config
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if r.Status != "done" || r.Method["arch"] != "cnn" || len(cfg.Channels) != 2 || cfg.Channels[1] != 8 || r.Final["R@1"] == 0 || len(r.Spectrum) != 8 {
		t.Fatalf("record: status %s method %v channels %v final %v", r.Status, r.Method, cfg.Channels, r.Final)
	}
	// --resume reads the config back from run.json; the image shape comes
	// from the data set again, and one more epoch continues the run.
	if err := newApp().Run([]string{"dmlbench", "run", "--quiet", "--out", out, "--resume", "--epochs", "2"}); err != nil {
		t.Fatal(err)
	}
	if r, _ = record.Read(filepath.Join(out, "run.json")); len(r.History) != 2 || r.Status != "done" {
		t.Fatalf("resumed cnn run: %d epochs, status %s", len(r.History), r.Status)
	}

	// Flat features: a usage error naming the problem, before any run.json.
	bad := filepath.Join(dir, "bad")
	err = newApp().Run([]string{"dmlbench", "run", "--quiet", "--dataset", "synthetic", "--arch", "cnn", "--loss", "margin", "--out", bad})
	var ue usageError
	if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "needs image input") {
		t.Fatalf("cnn on synthetic features: %v", err)
	}
	if _, err := record.Read(filepath.Join(bad, "run.json")); err == nil {
		t.Fatal("a refused run wrote run.json")
	}
	for _, a := range [][]string{
		{"--arch", "mlp", "--channels", "8"},                      // channels without cnn
		{"--arch", "cnn", "--channels", "8,x"},                    // bad widths
		{"--arch", "cnn", "--size", "8", "--channels", "2,2,2,2"}, // 8 → 4 → 2 → 1 → too small
	} {
		err := newApp().Run(append([]string{"dmlbench", "run", "--quiet", "--dataset", "omniglot", "--loss", "margin", "--out", bad}, a...))
		if err == nil || !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", a, err)
		}
	}
	if rows, ok := reports.Catalog("archs"); !ok || !strings.Contains(fmt.Sprint(rows), "cnn") {
		t.Fatalf("list archs: %q", rows)
	}
}
