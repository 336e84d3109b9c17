package main

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
)

func runTrainCLI(t *testing.T, args ...string) error {
	t.Helper()
	return newApp().Run(append([]string{"dmlbench", "run", "--quiet", "--dataset", "synthetic",
		"--loss", "multisimilarity", "--sampler", "spc-4", "--epochs", "2", "--iters-per-epoch", "3",
		"--batch-size", "32", "--hidden", "16", "--embed-dim", "8", "--metrics", "R@1,NMI"}, args...))
}

func TestRunSameSeedSameRecord(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := runTrainCLI(t, "--seed", "3", "--out", a); err != nil {
		t.Fatal(err)
	}
	if err := runTrainCLI(t, "--seed", "3", "--out", b); err != nil {
		t.Fatal(err)
	}
	ra, err := record.Read(filepath.Join(a, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := record.Read(filepath.Join(b, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ra.Status != "done" || len(ra.History) != 2 || ra.Final["R@1"] == 0 || len(ra.Spectrum) != 8 {
		t.Fatalf("incomplete record: %+v", ra)
	}
	for k := range ra.Initial {
		if _, ok := ra.Final[k]; !ok {
			t.Fatalf("final lacks initial's key %s", k)
		}
	}
	if ra.Method["loss"] != "multisimilarity" || ra.Method["sampler"] != "spc-4" || ra.Versions["gorgonia.org/gorgonia"] == "" && ra.Versions["go"] == "" {
		t.Fatalf("method/versions: %v %v", ra.Method, ra.Versions)
	}
	for i := range ra.History {
		if ra.History[i].Loss != rb.History[i].Loss || !sameMetrics(ra.History[i].Metrics, rb.History[i].Metrics) {
			t.Fatalf("epoch %d differs between identical runs: %v %v / %v %v", i+1, ra.History[i].Loss, rb.History[i].Loss, ra.History[i].Metrics, rb.History[i].Metrics)
		}
	}
	if !sameMetrics(ra.Initial, rb.Initial) || !sameMetrics(ra.Final, rb.Final) || !reflect.DeepEqual(ra.Spectrum, rb.Spectrum) || string(ra.Config) != string(rb.Config) {
		t.Fatal("identical runs wrote different records")
	}

	// The directory holds a checkpoint: a fresh run there is refused, and
	// --resume (config read back from run.json) finds nothing left to do
	// and reproduces the final metrics.
	if err := runTrainCLI(t, "--seed", "3", "--out", a); err == nil {
		t.Fatal("overwrote a run directory with a checkpoint")
	}
	if err := newApp().Run([]string{"dmlbench", "run", "--quiet", "--out", a, "--resume"}); err != nil {
		t.Fatal(err)
	}
	rr, err := record.Read(filepath.Join(a, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameMetrics(rr.Final, ra.Final) || len(rr.History) != 2 {
		t.Fatalf("resume of a finished run changed it: %v vs %v", rr.Final, ra.Final)
	}
	// Extending the run by one epoch continues from the checkpoint.
	if err := newApp().Run([]string{"dmlbench", "run", "--quiet", "--out", a, "--resume", "--epochs", "3"}); err != nil {
		t.Fatal(err)
	}
	if rr, _ = record.Read(filepath.Join(a, "run.json")); len(rr.History) != 3 || rr.History[1].Loss != ra.History[1].Loss {
		t.Fatalf("extended run: %d epochs", len(rr.History))
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"dmlbench", "run", "--out", filepath.Join(dir, "x"), "--dataset", "synthetic"},                            // no loss
		{"dmlbench", "run", "--out", filepath.Join(dir, "x"), "--loss", "margin", "--hyper", "beta"},               // bad hyper
		{"dmlbench", "run", "--out", filepath.Join(dir, "x"), "--loss", "margin", "--hidden", "12,x"},              // bad widths
		{"dmlbench", "run", "--out", filepath.Join(dir, "x"), "--loss", "margin", "--val-split", "1.5"},            // bad split
		{"dmlbench", "run", "--out", filepath.Join(dir, "x"), "--loss", "margin", "--config", "/nonexistent.yaml"}, // missing file
	} {
		err := newApp().Run(args)
		if err == nil {
			t.Errorf("%v accepted", args)
			continue
		}
		var ue usageError
		if args[len(args)-2] != "--config" && !errors.As(err, &ue) {
			t.Errorf("%v: %v is not a usage error", args, err)
		}
	}
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("loss: margin\nlearning_rate: 0.01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := newApp().Run([]string{"dmlbench", "run", "--out", filepath.Join(dir, "x"), "--config", typo})
	if err == nil || !strings.HasSuffix(err.Error(), `line 2: unknown key "learning_rate"; did you mean lr (--lr)?`) {
		t.Errorf("config typo: %v", err)
	}
	if rows, ok := reports.Catalog("samplers"); !ok || len(rows) < 2 {
		t.Fatal("list samplers printed nothing")
	}
	if _, ok := reports.Catalog("gizmos"); ok {
		t.Fatal("unknown kind claimed")
	}
}

// sameMetrics compares metric maps to 1e-12 relative: the training numbers
// (losses, embeddings, spectra) are bit-identical for a seed, but NMI sums
// over a Go map in metrics (iteration order varies), which can move its last
// bit between identical calls.
func sameMetrics(a, b record.Metrics) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || math.Abs(v-w) > 1e-12*math.Max(1, math.Abs(v)) {
			return false
		}
	}
	return true
}

type trainOutBuf struct{ s []byte }

func (b *trainOutBuf) Write(p []byte) (int, error) { b.s = append(b.s, p...); return len(p), nil }

// --save-embeddings writes the final test embeddings, and eval on them
// reproduces the run's final R@1.
func TestRunSaveEmbeddings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if err := runTrainCLI(t, "--seed", "1", "--out", dir, "--save-embeddings"); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := metrics.Evaluate(context.Background(), loadInput(t, filepath.Join(dir, "test_emb.npy"), filepath.Join(dir, "test_labels.npy")),
		metrics.Options{Metrics: []string{"R@1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics["R@1"] != rec.Final["R@1"] {
		t.Fatalf("eval of saved embeddings: R@1 %v, run.json final %v", res.Metrics["R@1"], rec.Final["R@1"])
	}
}

func loadInput(t *testing.T, emb, labels string) metrics.Input {
	t.Helper()
	x, err := arrays.LoadEmbeddings(emb)
	if err != nil {
		t.Fatal(err)
	}
	y, _, err := arrays.LoadLabels(labels)
	if err != nil {
		t.Fatal(err)
	}
	return metrics.Input{Emb: x, Labels: y}
}

// --regularizer (the suite's axis) maps onto the regulariser flags.
func TestRunRegularizerAxis(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if err := newApp().Run([]string{"dmlbench", "run", "--quiet", "--dataset", "synthetic", "--loss", "margin",
		"--sampler", "spc-4", "--epochs", "1", "--iters-per-epoch", "2", "--batch-size", "32", "--hidden", "16",
		"--embed-dim", "8", "--metrics", "R@1", "--regularizer", "rho=0.3,mixup", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Method["rho-reg"] != "0.3" || rec.Method["mixup"] == "" {
		t.Fatalf("method %v lacks the regularisers", rec.Method)
	}
	err = newApp().Run([]string{"dmlbench", "run", "--quiet", "--dataset", "synthetic", "--loss", "margin",
		"--regularizer", "bogus", "--out", filepath.Join(dir, "x")})
	if err == nil {
		t.Fatal("--regularizer bogus accepted")
	}
}
