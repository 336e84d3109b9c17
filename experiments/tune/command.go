package tune

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/experiments/tune/search"
	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// Command methods: a method with `command: [python3, train.py, ...]`
// trains with the user's own program under the contract of package
// external (docs/external.md); dmlbench splits the folds, hands out the
// rows, scores the embeddings and runs the search as for its own trainer.

// commandKeys are config keys a command method may not set or search on
// its own: dmlbench sets them (seed, dataset), they set what a trial costs
// (costKeys), or they set how dmlbench scores every method's embeddings.
var commandKeys = map[string]string{
	"seed": "the spec's seed and final.seeds set it", "dataset": "give it at the top level",
	"convention": "it sets how dmlbench scores every method; give it in the spec's fixed",
	"distance":   "it sets how dmlbench scores every method; give it in the spec's fixed",
	"backend":    "it sets how dmlbench scores every method; give it in the spec's fixed",
}

// commandKeyProblem is why key k cannot be a command method's own
// setting, or "".
func commandKeyProblem(k string) string {
	if costKeys[k] {
		return "it sets what a trial costs, so every method shares it (equal budgets); give it in the spec's fixed"
	}
	return commandKeys[k]
}

// parseCommandMethod reads a method given by its command: its fixed
// settings and search space may hold any names (they are handed to the
// command), except the settings every method shares (commandKeyProblem).
func (s *Spec) parseCommandMethod(me Method, m map[string]*yaml.Node, where string, budgets map[string]int, p *problems) (Method, bool) {
	n0 := p.Len()
	cn := m["command"]
	if cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
		p.Add("%s.command (line %d): want a list such as [python3, train.py, --arch, resnet18]", where, cn.Line)
	} else {
		for _, a := range cn.Content {
			if a.Kind != yaml.ScalarNode || a.Tag == "!!null" || a.Value == "" && len(me.Command) == 0 {
				p.Add("%s.command (line %d): want a list of words such as [python3, train.py, --arch, resnet18]", where, a.Line)
				break
			}
			me.Command = append(me.Command, a.Value)
		}
	}
	if fn := m["files"]; fn != nil {
		var l suite.List
		if err := fn.Decode(&l); err != nil {
			p.Add("%s.files (line %d): want a list of paths relative to the spec, such as [model.py, mypackage]", where, fn.Line)
		}
		me.Files = l
	}
	if me.Loss != "" || me.Miner != "" {
		p.Add("%s: a command method trains with its own loss; drop loss and miner (give them as fixed settings for the command)", where)
	}
	if me.Name == "" {
		p.Add("%s: a command method needs a name", where)
		return me, false
	}
	if !methodName.MatchString(me.Name) {
		p.Add("%s: name %q must be letters, digits and _ . + - (not starting with . or -): it names the method's directories", where, me.Name)
		return me, false
	}
	where = "method " + me.Name
	if n := m["budget"]; n != nil {
		var b int
		p.int(n, where+".budget", &b)
		budgets[me.Name] = b
	}
	if n := m["fixed"]; n != nil {
		me.Fixed = map[string]any{}
		for k, v := range p.mapping(n, where+".fixed", nil) {
			if why := commandKeyProblem(k); why != "" {
				p.Add("%s.fixed.%s (line %d): cannot be one method's setting (%s)", where, k, v.Line, why)
				continue
			}
			x, ok := commandValue(v, where+".fixed."+k, p)
			if !ok {
				continue
			}
			me.Fixed[k] = x
		}
	}
	me.hyper, me.values = map[string]bool{}, map[string][]any{}
	if n := m["space"]; n != nil {
		sm := p.mapping(n, where+".space", nil)
		order := make([]string, 0, len(sm))
		for k := range sm {
			order = append(order, k)
		}
		sort.Strings(order)
		for _, k := range order {
			w := where + ".space." + k
			if why := commandKeyProblem(k); why != "" {
				p.Add("%s: cannot be searched (%s)", w, why)
				continue
			}
			if _, dup := me.Fixed[k]; dup {
				p.Add("%s: also in the method's fixed; give it in one place", w)
				continue
			}
			q, ok := parseRange(sm[k], w, p)
			if !ok {
				continue
			}
			q.Name = k
			if !checkCommandParam(q, w, p) {
				continue
			}
			if q.Categorical() {
				typed, ok := commandValues(sm[k], w, p)
				if !ok {
					continue
				}
				me.values[k] = typed
			}
			me.Space = append(me.Space, q)
		}
	}
	return me, p.Len() == n0
}

// commandValue decodes one setting of a command method as YAML types it
// (handed to the command in JSON, so a non-finite number is refused).
func commandValue(n *yaml.Node, where string, p *problems) (any, bool) {
	var x any
	if err := n.Decode(&x); err != nil {
		p.Add("%s (line %d): %s", where, n.Line, strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " "))
		return nil, false
	}
	if f, ok := x.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		p.Add("%s (line %d): %s is not a finite number, which JSON cannot hand to the command (quote it for the string)", where, n.Line, n.Value)
		return nil, false
	}
	return x, true
}

// commandValues are the items of a categorical parameter's values list
// (n is the parameter's mapping), each with the type it was written with.
func commandValues(n *yaml.Node, where string, p *problems) ([]any, bool) {
	var list *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "values" {
			list = n.Content[i+1]
		}
	}
	items := []*yaml.Node{list}
	if list != nil && list.Kind == yaml.SequenceNode {
		items = list.Content
	}
	out := make([]any, 0, len(items))
	ok := true
	for _, it := range items {
		if it == nil {
			return nil, false
		}
		x, good := commandValue(it, where+".values", p)
		ok = ok && good
		out = append(out, x)
	}
	return out, ok
}

// checkCommandParam checks one searched parameter of a command method:
// distinct categorical values (8, 08 and 8.0 are one number), a valid
// range.
func checkCommandParam(q search.Param, where string, p *problems) bool {
	if q.Categorical() {
		seen := map[string]string{}
		ok := true
		for _, v := range q.Values {
			key := "s:" + v
			if x, err := trainers.ParseFinite(v); err == nil {
				key = "n:" + strconv.FormatFloat(x, 'g', -1, 64)
			}
			if prev, dup := seen[key]; dup {
				p.Add("%s: values %q and %q are the same setting", where, prev, v)
				ok = false
			}
			seen[key] = v
		}
		return ok
	}
	if err := q.Validate(); err != nil {
		p.Add("%s", strings.Replace(err.Error(), q.Name+": ", where+": ", 1))
		return false
	}
	return true
}

// commandConfig is the part of a trainer configuration dmlbench uses for
// a command method: the spec's fixed settings (epochs and how embeddings
// are scored among them), data set and seed.
func (s *Spec) commandConfig(seed int64) trainers.Config {
	cfg := trainers.Defaults()
	keys := make([]string, 0, len(s.Fixed))
	for k := range s.Fixed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		setKey(&cfg, k, s.Fixed[k])
	}
	cfg.Dataset, cfg.Seed = s.Dataset, seed
	return cfg
}

// checkCommand adds the problems of a command method's settings to p.
func (s *Spec) checkCommand(m Method, p *problems) {
	if !strings.HasPrefix(s.Dataset, "dir:") {
		p.Add("method %s: a command method needs dataset: dir:PATH (label files train_labels.npy and test_labels.npy), not %q", m.Name, s.Dataset)
	}
	cfg := s.commandConfig(s.Seed).WithDefaults()
	if cfg.Epochs < 1 {
		p.Add("method %s: epochs = %d must be ≥ 1 (the best epoch is chosen on validation)", m.Name, cfg.Epochs)
	}
	if _, err := trainers.NewEvaluator(cfg); err != nil {
		p.Add("method %s: %v", m.Name, err)
	}
}

// hashCommandFiles takes the hashes of every command method's files
// (cell.Provenance), relative to the spec's directory.
func (s *Spec) hashCommandFiles() error {
	for i := range s.Methods {
		me := &s.Methods[i]
		if len(me.Command) == 0 {
			continue
		}
		h, err := cell.Provenance(me.Command, s.Dir, me.Files)
		if err != nil {
			return fmt.Errorf("method %s.%w", me.Name, err)
		}
		me.fileHashes = h
	}
	return nil
}

// commandOnly reports whether every method of s is a command method.
func (s *Spec) commandOnly() bool {
	for _, m := range s.Methods {
		if len(m.Command) == 0 {
			return false
		}
	}
	return len(s.Methods) > 0
}

// commandTrainingClasses reads the training labels of a command spec's
// data set (relative to the spec's directory); its test files are not
// opened.
func (s *Spec) commandTrainingClasses() (TrainingClasses, error) {
	sp, err := cell.LoadSplit(s.dataDir(), "train")
	if err != nil {
		return TrainingClasses{}, err
	}
	return TrainingClasses{Dataset: s.Dataset, Split: fixtures.Split{Labels: sp.Labels, ClassNames: sp.ClassNames}}, nil
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
// directory and settings (the spec's fixed, then the method's) to its
// cell.
func (s *Spec) commandCell(me Method, c *Cell) {
	if len(me.Command) == 0 {
		return
	}
	wd, err := filepath.Abs(s.Dir)
	if err != nil {
		wd = s.Dir
	}
	c.Command, c.WorkDir, c.DataDir, c.Isolate = me.Command, wd, s.dataDir(), s.Isolate
	c.Files, c.FileHashes = me.Files, me.fileHashes
	c.Values = map[string]any{}
	for _, q := range me.Space {
		if i := slices.Index(q.Values, c.Params[q.Name]); i >= 0 && i < len(me.values[q.Name]) {
			c.Values[q.Name] = me.values[q.Name][i]
		}
	}
	c.Settings = map[string]any{}
	for _, fixed := range []map[string]any{s.Fixed, me.Fixed} {
		for k, v := range fixed {
			c.Settings[k] = v
		}
	}
}

// runCommandCell runs a command cell: the fold's training rows, and the
// validation rows (tuning) or every test row (final stage), handed to the
// command; the embeddings it writes scored per epoch.
func runCommandCell(ctx context.Context, dir string, c *Cell, version string) error {
	var ds cell.Dataset
	var err error
	if ds.Train, err = cell.LoadSplit(c.DataDir, "train"); err != nil {
		return err
	}
	if c.Stage == StageFinal {
		if ds.Test, err = cell.LoadSplit(c.DataDir, "test"); err != nil {
			return err
		}
	}
	folds, err := FoldClasses(len(ds.Train.ClassNames), c.Folds)
	if err != nil {
		return err
	}
	if c.Fold < 0 || c.Fold >= c.Folds {
		return fmt.Errorf("fold %d outside 0..%d", c.Fold, c.Folds-1)
	}
	cfg := c.Config.WithDefaults()
	valRows, trainRows := cell.RowsOfClasses(ds.Train.Labels, folds[c.Fold])
	a := cell.Assignment{
		Stage: c.Stage, Method: c.Method, Trial: c.Trial, Fold: c.Fold, Folds: c.Folds, Params: commandParams(c),
		Seed: cfg.Seed, Epochs: cfg.Epochs, ScheduleEpochs: cmp.Or(c.ScheduleEpochs, cfg.Epochs),
		Train: cell.RowSet{Split: "train", Rows: trainRows},
	}
	switch c.Stage {
	case StageTune:
		// The validation rows are training-split rows: no test row, label
		// or item path reaches a tuning cell.
		a.Embed = map[string]cell.RowSet{"val": {Split: "train", Rows: valRows}}
		a.EmbedEpochs = cell.Epochs1To(cfg.Epochs)
	case StageFinal:
		a.Embed = map[string]cell.RowSet{"test": {Split: "test", Rows: cell.AllRows(len(ds.Test.Labels))}}
		a.EmbedEpochs = []int{cfg.Epochs}
	default:
		return fmt.Errorf("%s: unknown stage %q", filepath.Join(dir, CellFile), c.Stage)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	ct, labels, err := cell.Assemble(abs, c.DataDir, ds, a)
	if err != nil {
		return err
	}
	var wrap []string
	if c.Stage == StageTune {
		// Its data directory is a view without the test split's files.
		view, err := trainView(c.DataDir, abs)
		if err != nil {
			return err
		}
		ct.Data = view
		if c.Isolate {
			if wrap, err = isolation(view, c.DataDir, abs); err != nil {
				return err
			}
		}
		if ds.Train.Items != "" {
			ct.Items["train"] = filepath.Join(view, filepath.Base(ds.Train.Items))
		}
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
	last, err := cell.Run(ctx, cell.Job{
		Command: c.Command, Wrap: wrap, WorkDir: c.WorkDir, Dir: abs, Files: c.Files, Expect: c.FileHashes, Contract: ct, Labels: labels, Record: run,
		Evaluate: cell.EvalFunc(evaluate), Stdout: os.Stdout, Stderr: os.Stderr,
	})
	if err := recordTrialFailure(ctx, dir, err); err != nil {
		return err
	}
	if c.Stage == StageTune {
		return checkObjective(dir, c.Objective)
	}
	if err := arrays.SaveNPY(filepath.Join(dir, TestEmbFile), last["test"]); err != nil {
		return err
	}
	return arrays.SaveLabelsNPY(filepath.Join(dir, TestLabelsFile), ds.Test.Labels)
}

// commandParams are the settings handed to the command: the fixed ones,
// then the trial's values: a categorical value as the spec wrote it, a
// range's value a number.
func commandParams(c *Cell) map[string]any {
	out := map[string]any{}
	for k, v := range c.Settings {
		out[k] = v
	}
	for k, v := range c.Params {
		if x, ok := c.Values[k]; ok {
			out[k] = x
			continue
		}
		var x any
		if err := yaml.Unmarshal([]byte(v), &x); err != nil || x == nil {
			x = v
		}
		out[k] = x
	}
	return out
}
