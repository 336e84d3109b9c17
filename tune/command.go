package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/external"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// Command methods: a method with `command: [python3, train.py, ...]`
// trains with the user's own program under the contract of package
// external (docs/external.md); dmlbench splits the folds, hands out the
// rows, scores the embeddings and runs the search as for its own trainer.

// commandEvalKeys are the config keys dmlbench itself reads for a command
// method (the number of epochs and how embeddings are scored); every fixed
// setting is also handed to the trainer.
var commandEvalKeys = []string{"epochs", "convention", "distance", "backend", "embed-dim"}

// commandReserved may not be searched for a command method.
var commandReserved = map[string]string{
	"seed": "the spec's seed and final.seeds set it", "epochs": "the epoch is chosen on validation",
	"dataset": "give it at the top level",
}

// parseCommandMethod reads a method given by its command.
func (s *Spec) parseCommandMethod(me Method, m map[string]*yaml.Node, where string, budgets map[string]int) (Method, error) {
	if err := decode(m["command"], where+".command", &me.Command); err != nil {
		return Method{}, fmt.Errorf("%s: want a list such as [python3, train.py, --arch, resnet18]", err)
	}
	if len(me.Command) == 0 || me.Command[0] == "" {
		return Method{}, fmt.Errorf("%s.command (line %d): empty; want a list such as [python3, train.py]", where, m["command"].Line)
	}
	if me.Loss != "" || me.Miner != "" {
		return Method{}, fmt.Errorf("%s: a command method trains with its own loss; drop loss and miner (give them as fixed settings for the command)", where)
	}
	if me.Name == "" {
		return Method{}, fmt.Errorf("%s: a command method needs a name", where)
	}
	where = "method " + me.Name
	if strings.ContainsAny(me.Name, "/ \t") {
		return Method{}, fmt.Errorf("%s: the name may not hold '/' or spaces", where)
	}
	if n, ok := m["budget"]; ok {
		var b int
		if err := decode(n, where+".budget", &b); err != nil {
			return Method{}, err
		}
		budgets[me.Name] = b
	}
	if n, ok := m["fixed"]; ok {
		if err := decode(n, where+".fixed", &me.Fixed); err != nil {
			return Method{}, err
		}
	}
	me.hyper = map[string]bool{}
	if n, ok := m["space"]; ok {
		sm, order, err := mapping(n, where+".space", nil)
		if err != nil {
			return Method{}, err
		}
		sort.Strings(order)
		for _, k := range order {
			if why, bad := commandReserved[k]; bad {
				return Method{}, fmt.Errorf("%s.space.%s: cannot be searched (%s)", where, k, why)
			}
			p, err := parseRange(sm[k], where+".space."+k)
			if err != nil {
				return Method{}, err
			}
			p.Name = k
			if err := p.Validate(); err != nil {
				return Method{}, fmt.Errorf("%s.space.%s", where, err)
			}
			me.Space = append(me.Space, p)
		}
	}
	return me, nil
}

// commandConfig is the part of a trainer configuration dmlbench uses for a
// command method: data set, seed, epochs and the scoring settings.
func (s *Spec) commandConfig(m Method, seed int64) (trainers.Config, error) {
	doc := map[string]any{"dataset": s.Dataset, "seed": seed}
	for _, fixed := range []map[string]any{s.Fixed, m.Fixed} {
		for _, k := range commandEvalKeys {
			if v, ok := fixed[k]; ok {
				doc[k] = v
			}
		}
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return trainers.Config{}, err
	}
	cfg := trainers.Defaults()
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return trainers.Config{}, fmt.Errorf("method %s: %s", m.Name, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return cfg, nil
}

// validateCommand checks a command method's settings at load time.
func (s *Spec) validateCommand(m Method) error {
	if !strings.HasPrefix(s.Dataset, "dir:") {
		return fmt.Errorf("method %s: a command method needs dataset: dir:PATH (label files train_labels.npy and test_labels.npy), not %q", m.Name, s.Dataset)
	}
	cfg, err := s.commandConfig(m, s.Seed)
	if err != nil {
		return err
	}
	if cfg.Epochs < 1 {
		return fmt.Errorf("method %s: epochs = %d must be ≥ 1 (the best epoch is chosen on validation)", m.Name, cfg.Epochs)
	}
	if _, err := trainers.NewEvaluator(cfg.WithDefaults()); err != nil {
		return fmt.Errorf("method %s: %w", m.Name, err)
	}
	return nil
}

// dataDir is the absolute directory of a dir:PATH data set (relative to
// the spec's directory).
func (s *Spec) dataDir() string {
	p := strings.TrimPrefix(s.Dataset, "dir:")
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.Dir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}

// commandCell adds a command method's command, working directory, data
// directory and fixed settings to its cell.
func (s *Spec) commandCell(me Method, c *Cell) {
	if len(me.Command) == 0 {
		return
	}
	wd, err := filepath.Abs(s.Dir)
	if err != nil {
		wd = s.Dir
	}
	c.Command, c.WorkDir, c.DataDir = me.Command, wd, s.dataDir()
	c.Settings = map[string]any{}
	for _, fixed := range []map[string]any{s.Fixed, me.Fixed} {
		for k, v := range fixed {
			c.Settings[k] = v
		}
	}
}

// LoadCellData loads the data set of a cell; command cells read their
// label files themselves (RunCell), so they get nil.
func LoadCellData(c *Cell) (Data, error) {
	if len(c.Command) > 0 {
		return nil, nil
	}
	return LoadData(c.Config)
}

// Files of a command cell's directory.
const (
	TrainRowsFile = "train_rows.npy"
	ValRowsFile   = "val_rows.npy"
	TestRowsFile  = "test_rows.npy"
)

// runCommandCell runs a command cell: the fold's training rows, and the
// validation rows (tuning) or every test row (final stage), handed to the
// command; the embeddings it writes scored per epoch.
func runCommandCell(ctx context.Context, dir string, c *Cell, version string) error {
	ds, err := external.LoadDataset(c.DataDir)
	if err != nil {
		return err
	}
	folds, err := FoldClasses(len(ds.Train.ClassNames), c.Folds)
	if err != nil {
		return err
	}
	if c.Fold < 0 || c.Fold >= c.Folds {
		return fmt.Errorf("fold %d outside 0..%d", c.Fold, c.Folds-1)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	cfg := c.Config.WithDefaults()
	valRows, trainRows := external.RowsOfClasses(ds.Train.Labels, folds[c.Fold])
	if err := external.WriteRows(filepath.Join(abs, TrainRowsFile), trainRows); err != nil {
		return err
	}
	ct := external.Contract{
		Version: external.ContractVersion, Stage: c.Stage, Method: c.Method, Trial: c.Trial, Fold: c.Fold, Folds: c.Folds,
		Params: commandParams(c), Seed: cfg.Seed, Epochs: cfg.Epochs, Dir: abs, Data: c.DataDir, Items: map[string]string{},
		Train:      external.Rows{Split: "train", Rows: filepath.Join(abs, TrainRowsFile), Count: len(trainRows)},
		Embeddings: filepath.Join(abs, external.EmbDir),
	}
	if ds.Train.Items != "" {
		ct.Items["train"] = ds.Train.Items
	}
	labels := map[string][]int32{}
	switch c.Stage {
	case StageTune:
		// The validation rows are training-split rows: no test row, label
		// or item path reaches a tuning cell.
		if err := external.WriteRows(filepath.Join(abs, ValRowsFile), valRows); err != nil {
			return err
		}
		ct.Embed = map[string]external.Rows{"val": {Split: "train", Rows: filepath.Join(abs, ValRowsFile), Count: len(valRows)}}
		for e := 1; e <= cfg.Epochs; e++ {
			ct.EmbedEpochs = append(ct.EmbedEpochs, e)
		}
		labels["val"] = pick(ds.Train.Labels, valRows)
	case StageFinal:
		test := make([]int, len(ds.Test.Labels))
		for i := range test {
			test[i] = i
		}
		if err := external.WriteRows(filepath.Join(abs, TestRowsFile), test); err != nil {
			return err
		}
		ct.Embed = map[string]external.Rows{"test": {Split: "test", Rows: filepath.Join(abs, TestRowsFile), Count: len(test)}}
		ct.EmbedEpochs = []int{cfg.Epochs}
		if ds.Test.Items != "" {
			ct.Items["test"] = ds.Test.Items
		}
		labels["test"] = ds.Test.Labels
	default:
		return fmt.Errorf("%s: unknown stage %q", filepath.Join(dir, CellFile), c.Stage)
	}
	evaluate, err := trainers.NewEvaluator(cfg)
	if err != nil {
		return err
	}
	trainName, evalName := c.splitNames()
	run := &record.Run{
		Schema: record.SchemaVersion, Version: version, Name: filepath.Base(dir), Dataset: cfg.Dataset,
		Method: map[string]string{
			"method": c.Method, "trainer": "command", "stage": c.Stage, "trial": strconv.Itoa(c.Trial), "fold": strconv.Itoa(c.Fold),
			"train_split": trainName, "eval_split": evalName,
		},
		Seed: cfg.Seed,
	}
	for k, v := range c.Params {
		run.Method["param:"+k] = v
	}
	last, err := external.Run(ctx, external.Job{
		Command: c.Command, WorkDir: c.WorkDir, Contract: ct, Labels: labels, Record: run,
		Evaluate: external.EvalFunc(evaluate), Stdout: os.Stdout, Stderr: os.Stderr,
	})
	var de *external.DivergedError
	if errors.As(err, &de) && c.Stage == StageTune {
		// A configuration that does not train: a finished trial, the worst score.
		_ = atomicfile.WriteBytes(filepath.Join(dir, FailedFile), []byte(err.Error()+"\n"))
	}
	if err != nil || c.Stage != StageFinal {
		return err
	}
	if err := arrays.SaveNPY(filepath.Join(dir, TestEmbFile), last["test"]); err != nil {
		return err
	}
	return arrays.SaveLabelsNPY(filepath.Join(dir, TestLabelsFile), ds.Test.Labels)
}

// commandParams are the settings handed to the command: the fixed ones,
// then the trial's values, typed as YAML reads them.
func commandParams(c *Cell) map[string]any {
	out := map[string]any{}
	for k, v := range c.Settings {
		out[k] = v
	}
	for k, v := range c.Params {
		var x any
		if err := yaml.Unmarshal([]byte(v), &x); err != nil || x == nil {
			x = v
		}
		out[k] = x
	}
	return out
}

func pick(labels []int32, rows []int) []int32 {
	out := make([]int32, len(rows))
	for i, r := range rows {
		out[i] = labels[r]
	}
	return out
}
