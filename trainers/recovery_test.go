package trainers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

// A checkpoint never exists without a run.json that holds the settings to
// continue it: the record is on disk before the epoch-0 checkpoint (the
// first evaluation, which precedes it, finds it there), so a kill between
// the two leaves a state that --resume (or a fresh start) recovers.
func TestRunJSONPrecedesFirstCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	c := experimentConfig()
	c.Epochs = 1
	checked := false
	_, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{Progress: func(p Progress) {
		if checked || p.Phase != "eval" || p.Epoch != 0 {
			return
		}
		checked = true
		if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err == nil {
			t.Error("the checkpoint exists before the untrained evaluation")
		}
		r, err := record.Read(filepath.Join(dir, RunFile))
		if err != nil {
			t.Errorf("no run.json when the first checkpoint is about to be written: %v", err)
			return
		}
		var got Config
		if err := json.Unmarshal(r.Config, &got); err != nil || got.Hash() != c.WithDefaults().Hash() || r.Status != "running" {
			t.Errorf("early run.json: status %q, config %s (%v)", r.Status, r.Config, err)
		}
	}})
	if err != nil || !checked {
		t.Fatalf("run: %v (checked %v)", err, checked)
	}
}

// Temporary files of writers killed before their rename are removed by
// the next run that locks the directory (a resume here).
func TestResumeRemovesLeftoverTemporaries(t *testing.T) {
	dir := t.TempDir()
	c := experimentConfig()
	c.Epochs = 1
	if _, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{}); err != nil {
		t.Fatal(err)
	}
	left := []string{".tmp-checkpoint.gob-123", ".tmp-run.json-456", ".tmp-test_emb.npy-7"}
	for _, n := range left {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.Epochs = 2
	if _, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{Resume: true}); err != nil {
		t.Fatal(err)
	}
	for _, n := range left {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s is still there after a successful resume", n)
		}
	}
}

// A fresh run refused before its first record leaves no directory of its
// own making and no lock file in one that existed.
func TestRefusedRunLeavesNoLockOnlyDirectory(t *testing.T) {
	c := experimentConfig()
	c.BatchSize = 100000
	made := filepath.Join(t.TempDir(), "new")
	if _, err := RunExperiment(context.Background(), c, made, ExperimentOptions{}); err == nil {
		t.Fatal("batch 100000 ran")
	}
	if _, err := os.Stat(made); err == nil {
		t.Fatalf("%s was left behind", made)
	}
	existing := t.TempDir()
	if _, err := RunExperiment(context.Background(), c, existing, ExperimentOptions{}); err == nil {
		t.Fatal("batch 100000 ran")
	}
	if ents, _ := os.ReadDir(existing); len(ents) != 0 {
		t.Fatalf("%s holds %d entries (%s…), want none", existing, len(ents), ents[0].Name())
	}
}

// Method keys given by the caller are in the first record, beside the
// trainer's own; the trainer's win.
func TestExperimentMethodKeys(t *testing.T) {
	dir := t.TempDir()
	c := experimentConfig()
	c.Epochs = 0
	run, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{Method: map[string]string{"embed_dim": "8", "loss": "other"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(filepath.Join(dir, RunFile))
	if err != nil || r.Method["embed_dim"] != "8" || r.Method["loss"] != "multisimilarity" || run.Method["embed_dim"] != "8" {
		t.Fatalf("method %v (%v)", r.Method, err)
	}
}
