package cell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// shellJob is a cell whose trainer is sh -c script, asking val (2 rows)
// after every one of epochs epochs.
func shellJob(t *testing.T, root, script string, epochs int) Job {
	t.Helper()
	dir := filepath.Join(root, "cell")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	asked := make([]int, epochs)
	for i := range asked {
		asked[i] = i + 1
	}
	c := Contract{Stage: "tune", Epochs: epochs, Embeddings: filepath.Join(dir, "embeddings"),
		Embed: map[string]Rows{"val": {Split: "train", Count: 2}}, EmbedEpochs: asked}
	eval := func(context.Context, mat32.Matrix, []int32) (record.Metrics, error) {
		return record.Metrics{"R@1": 1}, nil
	}
	return Job{Command: []string{"sh", "-c", script}, WorkDir: root, Dir: dir, Contract: c, Labels: map[string][]int32{"val": {0, 0}},
		Evaluate: eval, Record: &record.Run{Name: "cell"}}
}

// Each epoch's duration is recorded: from the command's start, or the
// previous epoch's embeddings, to this epoch's file.
func TestCommandEpochSeconds(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "emb.npy")
	if err := arrays.SaveNPY(src, mat32.Matrix{Rows: 2, Cols: 2, Data: []float32{0, 1, 1, 0}}); err != nil {
		t.Fatal(err)
	}
	emb := filepath.Join(root, "cell", "embeddings")
	script := fmt.Sprintf("sleep 0.3; cp %[1]s %[2]s/val_e001.npy; sleep 0.6; cp %[1]s %[2]s/val_e002.npy; sleep 0.3; cp %[1]s %[2]s/val_e003.npy", src, emb)
	j := shellJob(t, root, script, 3)
	t0 := time.Now()
	if _, err := Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0).Seconds()
	r, err := record.Read(filepath.Join(j.Dir, trainers.RunFile))
	if err != nil || len(r.History) != 3 {
		t.Fatalf("%v %+v", err, r)
	}
	// Each epoch lasts at least its sleep (file times are coarse: 50 ms of
	// slack); the epochs are disjoint spans of the command's run, so they
	// add up to no more than its wall time, however loaded the machine
	// (times counted from the command's start would add up to 2.4 s).
	sum := 0.0
	for i, want := range []float64{0.3, 0.6, 0.3} {
		got := r.History[i].Seconds
		sum += got
		if got < want-0.05 {
			t.Errorf("epoch %d: %.3f s, want at least %.1f s", i+1, got, want)
		}
	}
	if sum > wall {
		t.Errorf("epochs %.3f + %.3f + %.3f s = %.3f s, more than the command's %.3f s",
			r.History[0].Seconds, r.History[1].Seconds, r.History[2].Seconds, sum, wall)
	}
}

// Temporary files of writers killed mid-write (dmlbench's state files, the
// trainer's embeddings) are removed when the cell runs again; other files
// are left alone.
func TestStaleTempsRemoved(t *testing.T) {
	root := t.TempDir()
	j := shellJob(t, root, "exit 1", 1)
	dir, emb := j.Dir, j.Contract.Embeddings
	for _, d := range []string{emb, filepath.Join(dir, TrainerDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeState(filepath.Join(dir, StartedFile), state{Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	stale := []string{
		filepath.Join(dir, ".tmp-run.json-123"), filepath.Join(dir, ".tmp-command-started.json-4"),
		filepath.Join(dir, ".tmp-command-done.json-5"), filepath.Join(emb, ".tmp-val_e001.npy-6"),
	}
	// The trainer's own files, in its directory: left to it.
	kept := []string{filepath.Join(dir, TrainerDir, ".tmp-mine.ckpt-7"), filepath.Join(dir, TrainerDir, "ckpt.pt")}
	for _, p := range append(stale, kept...) {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(context.Background(), j); err == nil || !strings.Contains(err.Error(), "exited with status 1") {
		t.Fatalf("run: %v", err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed", p)
		}
	}
}
