package cell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// TrainTest is a command cell of a suite grid: the command trains on every
// training row and embeds every test row after each epoch; each epoch is
// scored on the test split and the last one is the run's result (as
// `dmlbench run` reports without a validation split). The test
// embeddings of the last epoch are kept as DIR/test_emb.npy and
// test_labels.npy.
type TrainTest struct {
	Dir, WorkDir, DataDir string
	Command               []string
	// Files are more files or directories of the trainer to hash (Job.Files).
	Files  []string
	Params map[string]any
	// Config gives the seed, the epochs and the scoring settings.
	Config trainers.Config
	// Record is run.json's start (name, data set, method keys).
	Record *record.Run
}

// RunTrainTest runs t (see TrainTest).
func RunTrainTest(ctx context.Context, t TrainTest) error {
	if t.Config.Epochs < 1 {
		return fmt.Errorf("epochs = %d: a command cell trains at least one epoch", t.Config.Epochs)
	}
	ds, err := LoadDataset(t.DataDir)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(t.Dir)
	if err != nil {
		return err
	}
	cfg := t.Config.WithDefaults()
	c, labels, err := Assemble(dir, t.DataDir, *ds, Assignment{
		Stage: "train", Method: t.Record.Method["method"], Params: t.Params, Seed: cfg.Seed, Epochs: cfg.Epochs,
		Train:       RowSet{Split: "train", Rows: AllRows(len(ds.Train.Labels))},
		Embed:       map[string]RowSet{"test": {Split: "test", Rows: AllRows(len(ds.Test.Labels))}},
		EmbedEpochs: Epochs1To(cfg.Epochs),
	})
	if err != nil {
		return err
	}
	evaluate, err := trainers.NewEvaluator(cfg)
	if err != nil {
		return err
	}
	last, err := Run(ctx, Job{
		Command: t.Command, WorkDir: t.WorkDir, Dir: dir, Files: t.Files, Contract: c, Labels: labels,
		Evaluate: EvalFunc(evaluate), Record: t.Record, Stdout: os.Stdout, Stderr: os.Stderr,
	})
	if err != nil {
		return err
	}
	if err := arrays.SaveNPY(filepath.Join(dir, "test_emb.npy"), last["test"]); err != nil {
		return err
	}
	return arrays.SaveLabelsNPY(filepath.Join(dir, "test_labels.npy"), ds.Test.Labels)
}
