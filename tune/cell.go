package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/mat32"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/model"
)

// Stages of a cell.
const (
	StageTune  = "tune"  // train on a fold's training classes, score on its validation classes
	StageFinal = "final" // train on a fold's training classes, score on the test classes
)

// Files of a cell directory.
const (
	CellFile       = "cell.json"
	TestEmbFile    = "test_emb.npy"
	TestLabelsFile = "test_labels.npy"
	// FailedFile marks a tuning cell whose configuration failed to train
	// (e.g. a diverging learning rate): the trial counts as the worst.
	FailedFile = "trial-failed.txt"
)

// Cell is the content of cell.json: everything one training run of the
// protocol needs, written by the driver before the cell runs.
type Cell struct {
	Stage  string            `json:"stage"`
	Method string            `json:"method"`
	Trial  int               `json:"trial"`
	Fold   int               `json:"fold"`
	Folds  int               `json:"folds"`
	Params map[string]string `json:"params"`
	// Objective is the validation metric of the tuning stage.
	Objective string          `json:"objective"`
	Config    trainers.Config `json:"config"`
	// Command cells (command.go): the trainer's command, the directory it
	// runs in, the data set's directory and the fixed settings it is handed.
	Command  []string       `json:"command,omitempty"`
	WorkDir  string         `json:"workdir,omitempty"`
	DataDir  string         `json:"data_dir,omitempty"`
	Settings map[string]any `json:"settings,omitempty"`
}

// ReadCell reads dir/cell.json.
func ReadCell(dir string) (*Cell, error) {
	var c Cell
	if err := readJSON(filepath.Join(dir, CellFile), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// readJSON decodes the JSON file at path into v (errors name the file;
// a missing file's error wraps os.ErrNotExist).
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// splitNames say in run.json which classes a cell trained and evaluated on.
func (c *Cell) splitNames() (train, eval string) {
	train = fmt.Sprintf("training classes outside fold %d/%d", c.Fold+1, c.Folds)
	if c.Stage == StageTune {
		return train, fmt.Sprintf("validation fold %d/%d of the training classes", c.Fold+1, c.Folds)
	}
	return train, "test classes"
}

// LoadData loads the data set of a cell's configuration.
func LoadData(cfg trainers.Config) (Data, error) {
	ds, err := fixtures.Load(cfg.Dataset, fixtures.Options{Size: cfg.Size, Path: cfg.DataPath, Seed: cfg.DataSeed})
	if err != nil {
		return nil, err
	}
	return DatasetData(ds), nil
}

// RunCell trains the cell of dir (its cell.json) on data and writes
// dir/run.json after every epoch; resume continues from the checkpoint.
// A tuning-stage cell receives only data.TrainingClasses: the test classes
// are not reachable from it. A final-stage cell also writes the test
// embeddings of its last epoch (dir/test_emb.npy, test_labels.npy).
func RunCell(ctx context.Context, dir string, data Data, resume bool, version string) error {
	c, err := ReadCell(dir)
	if err != nil {
		return err
	}
	if len(c.Command) > 0 {
		return runCommandCell(ctx, dir, c, version)
	}
	tc, err := data.TrainingClasses()
	if err != nil {
		return err
	}
	switch c.Stage {
	case StageTune:
		return runTuneCell(ctx, dir, c, tc, resume, version)
	case StageFinal:
		test, err := data.TestClasses()
		if err != nil {
			return err
		}
		return runFinalCell(ctx, dir, c, tc, test, resume, version)
	}
	return fmt.Errorf("%s: unknown stage %q", filepath.Join(dir, CellFile), c.Stage)
}

// runTuneCell trains on fold c.Fold's training classes and evaluates its
// validation classes after every epoch. Its inputs hold no test row.
func runTuneCell(ctx context.Context, dir string, c *Cell, tc TrainingClasses, resume bool, version string) error {
	train, val, err := FoldSplit(tc, c.Fold, c.Folds)
	if err != nil {
		return err
	}
	err = trainCell(ctx, dir, c, tc.Shape, train, val, resume, version, nil)
	var ce *trainers.ConfigError
	if err != nil && ctx.Err() == nil && (errors.As(err, &ce) || !errors.Is(err, trainers.ErrInterrupted)) {
		// The configuration does not train (diverges, does not fit): the
		// trial is finished, with the worst score.
		_ = atomicfile.WriteBytes(filepath.Join(dir, FailedFile), []byte(err.Error()+"\n"))
	}
	return err
}

// runFinalCell trains on fold c.Fold's training classes for the epochs the
// tuning stage chose and scores the test classes.
func runFinalCell(ctx context.Context, dir string, c *Cell, tc TrainingClasses, test fixtures.Split, resume bool, version string) error {
	train, _, err := FoldSplit(tc, c.Fold, c.Folds)
	if err != nil {
		return err
	}
	save := func(emb mat32.Matrix) error {
		if err := arrays.SaveNPY(filepath.Join(dir, TestEmbFile), emb); err != nil {
			return err
		}
		return arrays.SaveLabelsNPY(filepath.Join(dir, TestLabelsFile), test.Labels)
	}
	return trainCell(ctx, dir, c, tc.Shape, train, test, resume, version, save)
}

// afterEpoch, when set (by tests), is called after run.json is written at
// the end of every epoch.
var afterEpoch func(dir string, r *record.Run)

// trainCell runs trainers.Train with train as the training split and eval
// as the split scored after every epoch, keeping run.json current, and
// removes the checkpoint once run.json says done.
func trainCell(ctx context.Context, dir string, c *Cell, shape []int, train, eval fixtures.Split, resume bool, version string, final func(mat32.Matrix) error) error {
	cfg := c.Config.WithDefaults()
	if len(shape) == 3 {
		cfg.InChannels, cfg.InHeight, cfg.InWidth = shape[0], shape[1], shape[2]
	}
	if err := cfg.Validate(); err != nil {
		return &trainers.ConfigError{Err: err}
	}
	if err := model.Check(cfg.ModelConfig(train.X.Cols)); err != nil {
		return &trainers.ConfigError{Err: fmt.Errorf("arch %s on data set %s: %w", cfg.Arch, cfg.Dataset, err)}
	}
	evaluate, err := trainers.NewEvaluator(cfg)
	if err != nil {
		return err
	}
	lock, err := trainers.LockRunDir(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	ck := filepath.Join(dir, trainers.CheckpointFile)
	if _, err := os.Stat(ck); err != nil {
		resume = false
	}
	runPath := filepath.Join(dir, trainers.RunFile)
	trainName, evalName := c.splitNames()
	cfgJSON, _ := json.Marshal(cfg)
	run := &record.Run{
		Schema: record.SchemaVersion, Version: version, Name: filepath.Base(dir), Dataset: cfg.Dataset,
		Method: map[string]string{
			"method": c.Method, "loss": cfg.Loss, "miner": cfg.Miner, "sampler": cfg.Sampler, "arch": cfg.Arch,
			"stage": c.Stage, "trial": strconv.Itoa(c.Trial), "fold": strconv.Itoa(c.Fold),
			"train_split": trainName, "eval_split": evalName,
		},
		Seed: cfg.Seed, Config: cfgJSON, Status: "running",
	}
	if cfg.Miner == "" {
		run.Method["miner"] = "none"
	}
	for k, v := range c.Params {
		run.Method["param:"+k] = v
	}
	write := func(r *record.Run) error { return record.WriteAtomic(runPath, r) }
	onEpoch := write
	if afterEpoch != nil {
		onEpoch = func(r *record.Run) error {
			if err := write(r); err != nil {
				return err
			}
			afterEpoch(dir, r)
			return nil
		}
	}
	opt := trainers.Options{
		Train: trainers.Split{X: train.X, Labels: train.Labels}, Test: trainers.Split{X: eval.X, Labels: eval.Labels},
		Evaluate: evaluate, Checkpoint: ck, Resume: resume, OnStart: write, OnEpoch: onEpoch, FinalEmbeddings: final,
	}
	if err := trainers.Train(ctx, cfg, opt, run); err != nil {
		if run.Status != "interrupted" {
			run.Status = "failed"
		}
		_ = write(run)
		return err
	}
	if err := write(run); err != nil {
		return err
	}
	return trainers.RemoveCheckpoint(ck)
}

// FoldScore is the objective of a finished tuning cell at its best epoch
// (the epoch chosen on the validation classes; trained epochs only) and
// that epoch; ok is false when no epoch holds the objective. Objectives
// that are better when lower are negated, so higher is always better.
func FoldScore(r *record.Run, objective string) (score float64, epoch int, ok bool) {
	sign := 1.0
	if metrics.LowerIsBetter(objective) {
		sign = -1
	}
	score = math.Inf(-1)
	for _, e := range r.History {
		if v, has := e.Metrics[objective]; has && !math.IsNaN(v) && sign*v > score {
			score, epoch, ok = sign*v, e.Epoch, true
		}
	}
	return score, epoch, ok
}
