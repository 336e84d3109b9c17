package trainers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers/losses"
)

// experimentConfig is a small run on the synthetic data set, built on
// Defaults as the command line builds its configs.
func experimentConfig() Config {
	c := Defaults()
	c.Dataset, c.Loss, c.Sampler = "synthetic", "multisimilarity", "spc-4"
	c.Epochs, c.ItersPerEpoch, c.BatchSize, c.Hidden, c.EmbedDim = 3, 3, 32, []int{16}, 8
	c.ValSplit, c.Seed, c.WeightDecay = 0.3, 5, 0
	return c
}

// TestRunExperimentReproducesRecordedRun pins a short run to the numbers
// it had before Train was split into stages with one per-epoch RNG bundle
// (recorded with that build: `dmlbench run --dataset synthetic --loss
// multisimilarity --sampler spc-4 --epochs 3 --iters-per-epoch 3
// --batch-size 32 --hidden 16 --embed-dim 8 --val-split 0.3 --seed 5
// --weight-decay 0`). Losses agree to 1e-5 relative, so that another
// summation order of the linear algebra passes while a changed random
// stream (another batch, another mined pair) does not.
func TestRunExperimentReproducesRecordedRun(t *testing.T) {
	run, err := RunExperiment(context.Background(), experimentConfig(), t.TempDir(), ExperimentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLoss := []float64{0.9304210463856748, 0.9209685567720746, 0.9491334966369905}
	wantR1 := []float64{0.326171875, 0.3212890625, 0.318359375}
	wantVal := []float64{0.65625, 0.65625, 0.66875}
	if len(run.History) != 3 || run.Status != "done" || run.BestEpoch != 3 || run.Initial["R@1"] != 0.3271484375 {
		t.Fatalf("run: status %s, %d epochs, best epoch %d, initial R@1 %v", run.Status, len(run.History), run.BestEpoch, run.Initial["R@1"])
	}
	for i, h := range run.History {
		if math.Abs(h.Loss-wantLoss[i]) > 1e-5*wantLoss[i] || h.Metrics["R@1"] != wantR1[i] || h.ValMetric["R@1"] != wantVal[i] {
			t.Errorf("epoch %d: loss %v R@1 %v val R@1 %v, recorded %v %v %v", i+1, h.Loss, h.Metrics["R@1"], h.ValMetric["R@1"], wantLoss[i], wantR1[i], wantVal[i])
		}
	}
}

// Omitting a setting gives Defaults' value, weight decay included, and
// run.json records the miner as none when none is given.
func TestRunExperimentRecordsDefaults(t *testing.T) {
	c := experimentConfig()
	c.WeightDecay, c.Epochs = Defaults().WeightDecay, 1
	run, err := RunExperiment(context.Background(), c, t.TempDir(), ExperimentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(run.Config), `"weight-decay":0.0004`) || run.Method["miner"] != "none" {
		t.Fatalf("config %s, method %v", run.Config, run.Method)
	}
}

// A batch larger than the training split is a one-line configuration
// error before anything is allocated or written (a batch of 100 000 used
// to allocate ~80 GB).
func TestRunExperimentBatchLargerThanData(t *testing.T) {
	for _, b := range []int{100000, 1000} {
		c := experimentConfig()
		c.BatchSize = b
		dir := t.TempDir()
		_, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{})
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), "exceeds the") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("batch %d: %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, RunFile)); err == nil {
			t.Fatalf("batch %d: a refused run wrote run.json", b)
		}
	}
}

// A second lock of a run directory fails naming the holder; releasing it
// lets the next writer in. (flock locks belong to an open file, so two
// opens in one process conflict as two processes do.)
func TestLockRunDir(t *testing.T) {
	dir := t.TempDir()
	l, err := LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockRunDir(dir)
	want := "run directory " + dir + " is in use by pid " + strconv.Itoa(os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("second lock: %v, want %q", err, want)
	}
	// A run in a locked directory is refused before it touches anything.
	if _, err := RunExperiment(context.Background(), experimentConfig(), dir, ExperimentOptions{}); err == nil || !strings.Contains(err.Error(), "in use by pid") {
		t.Fatalf("run in a locked directory: %v", err)
	}
	l.Release()
	l2, err := LockRunDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
}

// A resume that fails (a corrupt checkpoint, a foreign configuration) or
// is interrupted before finishing an epoch leaves run.json as it was; one
// that finishes replaces it with the newer state.
func TestFailedResumeKeepsRunJSON(t *testing.T) {
	dir := t.TempDir()
	c := experimentConfig()
	c.Epochs = 1
	if _, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{}); err != nil {
		t.Fatal(err)
	}
	runPath, ckPath := filepath.Join(dir, RunFile), filepath.Join(dir, CheckpointFile)
	before, _ := os.ReadFile(runPath)
	ck, _ := os.ReadFile(ckPath)
	unchanged := func(what string) {
		t.Helper()
		if after, _ := os.ReadFile(runPath); !bytes.Equal(before, after) {
			t.Fatalf("%s rewrote run.json:\n%s", what, after)
		}
	}

	c.Epochs = 2
	other := c
	other.LR = 0.5 // another training configuration: the checkpoint does not fit
	if _, err := RunExperiment(context.Background(), other, dir, ExperimentOptions{Resume: true}); err == nil {
		t.Fatal("resume under another configuration accepted")
	}
	unchanged("a resume under another configuration")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunExperiment(ctx, c, dir, ExperimentOptions{Resume: true}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled resume: %v", err)
	}
	unchanged("an interrupted resume")

	os.WriteFile(ckPath, ck[:len(ck)/2], 0o644)
	if _, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{Resume: true}); err == nil {
		t.Fatal("resume from a truncated checkpoint accepted")
	}
	unchanged("a resume from a truncated checkpoint")

	os.WriteFile(ckPath, ck, 0o644)
	run, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(runPath)
	if err != nil || r.Status != "done" || len(r.History) != 2 || len(run.History) != 2 {
		t.Fatalf("extended run: %+v, %v", r, err)
	}
}

// A fresh run refuses a directory holding a finished run.
func TestFreshRunKeepsFinishedRun(t *testing.T) {
	dir := t.TempDir()
	c := experimentConfig()
	c.Epochs = 0
	if _, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, CheckpointFile))
	if _, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{}); err == nil || !strings.Contains(err.Error(), "finished run") {
		t.Fatalf("second fresh run over a finished one: %v", err)
	}
}

// A partial literal takes every default except the zero-valid settings;
// a complete config (Defaults) is a fixed point apart from the derived
// embed-norm.
func TestWithDefaultsFromDefaults(t *testing.T) {
	got := Config{Loss: "margin"}.WithDefaults()
	want := Defaults()
	want.Loss, want.Dataset, want.Epochs, want.WeightDecay, want.EmbedNorm = "margin", "", 0, 0, "l2"
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("WithDefaults of a literal:\n%+v\nwant\n%+v", got, want)
	}
	d := Defaults()
	d.Loss = "margin"
	full := d.WithDefaults()
	d.EmbedNorm = "l2"
	if !reflect.DeepEqual(full, d) {
		t.Fatalf("WithDefaults changed a complete config:\n%+v\n%+v", full, d)
	}
}

// A run.json config written before the test-time, backend and
// save-embeddings settings became config keys hashes as it did then
// (3b8dc6f4c510ee84, from that build's checkpoint), read back over
// Defaults as --resume reads it, so such runs still resume.
func TestHashOfEarlierRunUnchanged(t *testing.T) {
	old := `{"dataset": "synthetic", "loss": "multisimilarity", "sampler": "spc-4", "epochs": 3, "iters-per-epoch": 3, "batch-size": 32, "lr": 0.001, "weight-decay": 0, "lr-gamma": 0.3, "arch": "mlp", "hidden": [16], "embed-dim": 8, "norm": "layer", "embed-norm": "l2", "chunk": 0, "eval-every": 1, "val-split": 0.3, "select-by": "R@1", "convention": "strict", "distance": "euclidean", "seed": 5}`
	c := Defaults()
	if err := json.Unmarshal([]byte(old), &c); err != nil {
		t.Fatal(err)
	}
	if h := c.WithDefaults().Hash(); h != "3b8dc6f4c510ee84" {
		t.Fatalf("hash %s, the earlier build wrote 3b8dc6f4c510ee84", h)
	}
	c.SaveEmbeddings, c.TestTime, c.Backend = true, "knn", "faiss"
	if h := c.WithDefaults().Hash(); h != "3b8dc6f4c510ee84" {
		t.Fatalf("evaluation-only settings changed the hash: %s", h)
	}
}

// panicLoss panics in its first step, as a bug would.
type panicLoss struct{ testLoss }

func (panicLoss) Name() string { return "enginetest-panic" }
func (panicLoss) Forward(losses.Batch, []float32) (float64, error) {
	panic("index out of range [7] with length 3")
}

func init() {
	losses.Register(losses.Info{Name: "enginetest-panic", Summary: "test-only loss that panics",
		Hyper: map[string]float64{}, New: func(losses.Config) (losses.Loss, error) { return panicLoss{}, nil }})
}

// A panic inside training becomes a one-line error, run.json records the
// run as failed, and the epoch-0 checkpoint stays for --resume.
func TestRunExperimentRecoversPanic(t *testing.T) {
	dir := t.TempDir()
	c := experimentConfig()
	c.Loss = "enginetest-panic"
	var logged string
	_, err := RunExperiment(context.Background(), c, dir, ExperimentOptions{Logf: func(f string, a ...any) { logged = f }})
	if err == nil || !strings.Contains(err.Error(), "internal error: index out of range") || strings.Contains(err.Error(), "\n") || logged == "" {
		t.Fatalf("panic: %v (logged %q)", err, logged)
	}
	r, err := record.Read(filepath.Join(dir, RunFile))
	if err != nil || r.Status != "failed" || r.Initial == nil {
		t.Fatalf("run.json after a panic: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err != nil {
		t.Fatal(err)
	}
}
