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

// Train and test rows files of a TrainTest cell.
const (
	AllTrainRowsFile = "train_rows.npy"
	AllTestRowsFile  = "test_rows.npy"
)

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
	all := func(n int) []int {
		r := make([]int, n)
		for i := range r {
			r[i] = i
		}
		return r
	}
	train, test := all(len(ds.Train.Labels)), all(len(ds.Test.Labels))
	if err := WriteRows(filepath.Join(dir, AllTrainRowsFile), train); err != nil {
		return err
	}
	if err := WriteRows(filepath.Join(dir, AllTestRowsFile), test); err != nil {
		return err
	}
	cfg := t.Config.WithDefaults()
	c := Contract{
		Version: ContractVersion, Stage: "train", Method: t.Record.Method["method"], Folds: 0,
		Params: t.Params, Seed: cfg.Seed, Epochs: cfg.Epochs, Data: t.DataDir, Items: map[string]string{},
		Train:      Rows{Split: "train", Rows: filepath.Join(dir, AllTrainRowsFile), Count: len(train)},
		Embed:      map[string]Rows{"test": {Split: "test", Rows: filepath.Join(dir, AllTestRowsFile), Count: len(test)}},
		Embeddings: filepath.Join(dir, EmbDir),
	}
	for e := 1; e <= cfg.Epochs; e++ {
		c.EmbedEpochs = append(c.EmbedEpochs, e)
	}
	for name, s := range map[string]Split{"train": ds.Train, "test": ds.Test} {
		if s.Items != "" {
			c.Items[name] = s.Items
		}
	}
	evaluate, err := trainers.NewEvaluator(cfg)
	if err != nil {
		return err
	}
	last, err := Run(ctx, Job{
		Command: t.Command, WorkDir: t.WorkDir, Dir: dir, Files: t.Files, Contract: c, Labels: map[string][]int32{"test": ds.Test.Labels},
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
