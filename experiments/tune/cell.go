package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/internal/mat32"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/metrics"
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
	// (TrialFailed: it diverged, or the trainer refused a setting): the
	// trial counts as the worst.
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
	// Values are the trial's categorical values as the spec wrote them.
	Values map[string]any `json:"values,omitempty"`
	// Files are the method's files key; FileHashes the hashes of the
	// trainer's files the cell was planned with (cell.Provenance): a file
	// changed since fails the cell.
	Files      []string          `json:"files,omitempty"`
	FileHashes map[string]string `json:"file_hashes,omitempty"`
	// ScheduleEpochs is the tuning cells' epoch count: a final cell trains
	// Config.Epochs (the epoch chosen on validation) of a schedule sized
	// for ScheduleEpochs (0: Config.Epochs).
	ScheduleEpochs int `json:"schedule_epochs,omitempty"`
	// Isolate: a tuning command runs under bubblewrap (isolate.go).
	Isolate bool `json:"isolate,omitempty"`
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

// CellOptions are the settings of RunCell that are not the cell's.
type CellOptions struct {
	// Resume continues from the cell's checkpoint when there is one.
	Resume bool
	// Version is recorded in run.json.
	Version string
	// Warn receives warnings (a damaged checkpoint restarted); nil
	// discards them.
	Warn io.Writer
}

// ErrNonFinite is wrapped by the error of a model whose embeddings hold
// NaN or ±Inf: it diverged.
var ErrNonFinite = errors.New("non-finite embeddings (the model diverged)")

// TrialFailed reports whether err is a configuration's own failure to
// train: divergence (a non-finite loss or embeddings), a setting the
// trainer refuses, or a command that failed cell.MaxFailures starts in a
// row. Such a tuning cell is a finished trial with the worst
// score. Any other error (a full disk, a lock held by another process,
// an interruption) fails only the cell, which the next run retries.
func TrialFailed(err error) bool {
	var ce *trainers.ConfigError
	var de *cell.DivergedError // a command's exit status cell.ExitDiverged
	var gu *cell.GaveUpError   // a command that failed cell.MaxFailures starts in a row
	return errors.As(err, &ce) || errors.As(err, &de) || errors.As(err, &gu) || errors.Is(err, trainers.ErrDiverged) || errors.Is(err, ErrNonFinite)
}

// recordTrialFailure marks cell dir failed (FailedFile) when err is its
// configuration's own failure (TrialFailed): a tuning cell's trial then
// counts as the worst, a final cell's seed is left out of its method's
// row; neither is run again. It returns err, or the error of writing the
// mark.
func recordTrialFailure(ctx context.Context, dir string, err error) error {
	if err != nil && ctx.Err() == nil && TrialFailed(err) {
		if werr := atomicfile.WriteBytes(filepath.Join(dir, FailedFile), []byte(err.Error()+"\n")); werr != nil {
			return fmt.Errorf("%w (and the trial's failure could not be recorded: %v)", err, werr)
		}
	}
	return err
}

// RunCell trains the cell of dir (its cell.json) on data and writes
// dir/run.json after every epoch. A tuning-stage cell receives only
// data.TrainingClasses: the test classes are not reachable from it, and
// a configuration that fails to train (TrialFailed) marks the trial
// failed (FailedFile). A final-stage cell also writes the test
// embeddings of its last epoch (dir/test_emb.npy, test_labels.npy).
func RunCell(ctx context.Context, dir string, data Data, opt CellOptions) error {
	c, err := ReadCell(dir)
	if err != nil {
		return err
	}
	if len(c.Command) > 0 {
		return runCommandCell(ctx, dir, c, opt.Version)
	}
	tc, err := data.TrainingClasses()
	if err != nil {
		return err
	}
	switch c.Stage {
	case StageTune:
		return runTuneCell(ctx, dir, c, tc, opt)
	case StageFinal:
		test, err := data.TestClasses()
		if err != nil {
			return err
		}
		return runFinalCell(ctx, dir, c, tc, test, opt)
	}
	return fmt.Errorf("%s: unknown stage %q", filepath.Join(dir, CellFile), c.Stage)
}

// runTuneCell trains on fold c.Fold's training classes and evaluates its
// validation classes after every epoch. Its inputs hold no test row.
func runTuneCell(ctx context.Context, dir string, c *Cell, tc TrainingClasses, opt CellOptions) error {
	train, val, err := FoldSplit(tc, c.Fold, c.Folds)
	if err != nil {
		return err
	}
	if err := recordTrialFailure(ctx, dir, trainCell(ctx, dir, c, tc.Shape, train, val, opt, nil)); err != nil {
		return err
	}
	return checkObjective(dir, c.Objective)
}

// checkObjective fails a finished tuning cell none of whose epochs holds
// the objective: the spec, not the configuration, is at fault, so the
// cell (not the trial) fails, loudly, instead of scoring as the worst.
func checkObjective(dir, objective string) error {
	path := filepath.Join(dir, trainers.RunFile)
	r, err := record.Read(path)
	if err != nil {
		return err
	}
	if _, _, ok := FoldScore(r, objective); ok {
		return nil
	}
	r.Status = "failed"
	if err := record.WriteAtomic(path, r); err != nil {
		return err
	}
	return fmt.Errorf("%s: no epoch holds a value of the objective %s; check the objective against the data set (dmlbench tune status)", dir, objective)
}

// runFinalCell trains on fold c.Fold's training classes for the epochs the
// tuning stage chose and scores the test classes.
func runFinalCell(ctx context.Context, dir string, c *Cell, tc TrainingClasses, test fixtures.Split, opt CellOptions) error {
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
	return recordTrialFailure(ctx, dir, trainCell(ctx, dir, c, tc.Shape, train, test, opt, save))
}

// afterEpoch, when set (by tests), is called after run.json is written at
// the end of every epoch.
var afterEpoch func(dir string, r *record.Run)

// finiteEval refuses non-finite embeddings before evaluating them.
func finiteEval(e trainers.EvalFunc) trainers.EvalFunc {
	return func(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error) {
		for i, v := range emb.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("embedding row %d holds %v: %w", i/max(emb.Cols, 1), v, ErrNonFinite)
			}
		}
		return e(ctx, emb, labels)
	}
}

// trainCell runs trainers.Train with train as the training split and eval
// as the split scored after every epoch, keeping run.json current, and
// removes the checkpoint once run.json says done. A damaged checkpoint
// starts the cell over, with a warning.
func trainCell(ctx context.Context, dir string, c *Cell, shape []int, train, eval fixtures.Split, opt CellOptions, final func(mat32.Matrix) error) error {
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
		return &trainers.ConfigError{Err: err}
	}
	lock, err := trainers.LockRunDir(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	ck := filepath.Join(dir, trainers.CheckpointFile)
	resume := opt.Resume
	if _, err := os.Stat(ck); err != nil {
		resume = false
	}
	opts := trainers.Options{
		Train: trainers.Split{X: train.X, Labels: train.Labels}, Test: trainers.Split{X: eval.X, Labels: eval.Labels},
		Evaluate: finiteEval(evaluate), Checkpoint: ck, Resume: resume, FinalEmbeddings: final,
	}
	err = trainOnce(ctx, dir, c, cfg, opts, opt.Version)
	if resume && errors.Is(err, trainers.ErrCorruptCheckpoint) && ctx.Err() == nil {
		if opt.Warn != nil {
			fmt.Fprintf(opt.Warn, "warning: %s: %s; starting the cell over\n", dir, firstLine(err))
		}
		if rerr := os.Remove(ck); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return rerr
		}
		opts.Resume = false
		err = trainOnce(ctx, dir, c, cfg, opts, opt.Version)
	}
	if err != nil {
		return err
	}
	return trainers.RemoveCheckpoint(ck)
}

// trainOnce is one trainers.Train of a cell with its run record.
func trainOnce(ctx context.Context, dir string, c *Cell, cfg trainers.Config, opts trainers.Options, version string) error {
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
	opts.OnStart, opts.OnEpoch = write, write
	if afterEpoch != nil {
		opts.OnEpoch = func(r *record.Run) error {
			if err := write(r); err != nil {
				return err
			}
			afterEpoch(dir, r)
			return nil
		}
	}
	if err := trainers.Train(ctx, cfg, opts, run); err != nil {
		if run.Status != "interrupted" {
			run.Status = "failed"
		}
		_ = write(run)
		return err
	}
	return write(run)
}

// firstLine is the first line of err's message.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// FoldScore is the objective of a finished tuning cell at its best epoch
// (the epoch chosen on the validation classes; trained epochs only; the
// lowest value for an objective that is better lower) and that epoch; ok
// is false when no epoch holds the objective. The score keeps its sign.
func FoldScore(r *record.Run, objective string) (score float64, epoch int, ok bool) {
	lower := metrics.LowerIsBetter(objective)
	for _, e := range r.History {
		if v, has := e.Metrics[objective]; has && !math.IsNaN(v) && (!ok || better(v, score, lower)) {
			score, epoch, ok = v, e.Epoch, true
		}
	}
	return score, epoch, ok
}

// better reports whether a is strictly better than b.
func better(a, b float64, lower bool) bool {
	if lower {
		return a < b
	}
	return a > b
}
