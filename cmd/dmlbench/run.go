package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/model"
)

func addRun() {
	d := trainers.Defaults()
	register(&cli.Command{
		Name:        "run",
		Usage:       "train an embedding with a DML loss and record metrics per epoch in run.json",
		UsageText:   "dmlbench run --dataset NAME --loss LOSS [--miner M] [--sampler S] --out DIR [options]",
		Description: helpText("run"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "YAML `FILE` with the same keys as the flags (keys not in it take the defaults below)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "run `DIR` (run.json, checkpoint.gob)"},
			&cli.BoolFlag{Name: "resume", Usage: "continue DIR from DIR/checkpoint.gob with every setting recorded in DIR/run.json"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress output"},
			&cli.StringFlag{Name: "regularizer", Usage: "shorthand for the suite axis: comma list of none, rho[=P], das, mixup"},
			&methodFlag{cli.GenericFlag{Name: "method", Value: &methodValues{}, Usage: "`KEY=VALUE` added to run.json's method keys (report --group-by), e.g. a suite's grid axes; repeatable; keys the trainer sets itself win"}},
		}, withDatasetBatchSizes(configFlags(&d))...),
		Action: runAction,
	})
}

// withDatasetBatchSizes names, in the --batch-size help, the data sets that
// carry their own default batch size (fixtures.DefaultBatchSize), which
// runConfig applies when no batch size is given.
func withDatasetBatchSizes(flags []cli.Flag) []cli.Flag {
	var own []string
	for _, name := range fixtures.Names() {
		if b := fixtures.DefaultBatchSize(name); b > 0 {
			own = append(own, fmt.Sprintf("%s %d", name, b))
		}
	}
	for _, fl := range flags {
		if f, ok := fl.(*cli.IntFlag); ok && f.Name == "batch-size" && len(own) > 0 {
			f.Usage += "; when not given, data sets with a size of their own use it: " + strings.Join(own, ", ")
		}
	}
	return flags
}

// datasetBatchSize gives cfg the batch size its data set carries; the
// caller applies it when neither a flag nor the --config file sets one.
func datasetBatchSize(cfg *trainers.Config) {
	if b := fixtures.DefaultBatchSize(cfg.Dataset); b > 0 {
		cfg.BatchSize = b
	}
}

// resumable are the settings that --resume may change: they are outside
// the config hash (trainers.Config.Hash), so a finished run can be
// extended (epochs) or re-scored (evaluation and test-time settings).
const resumable = "epochs, eval-every, metrics, compat, distance, backend, test-time*, save-embeddings"

// runConfig builds the run's configuration, the one place it is defaulted
// and validated: the defaults (trainers.Defaults), then a --config file's
// keys, then the flags given, then trainers.Config.Resolve. With --resume the base
// is the configuration recorded in DIR/run.json instead, and a flag that
// would change a hashed setting is a usage error.
func runConfig(c *cli.Context) (trainers.Config, error) {
	cfg := trainers.Defaults()
	out := c.String("out")
	var recorded *trainers.Config
	var fileKeys map[string]bool // the keys a --config file gives
	switch {
	case c.Bool("resume") && c.IsSet("config"):
		return cfg, usagef("--resume restores the configuration recorded in %s; --config does not apply", filepath.Join(out, trainers.RunFile))
	case c.IsSet("config"):
		var err error
		if cfg, fileKeys, err = trainers.LoadConfigFile(c.String("config")); err != nil {
			return cfg, err
		}
	case c.Bool("resume"):
		path := filepath.Join(out, trainers.RunFile)
		r, err := record.Read(path)
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(filepath.Join(out, trainers.CheckpointFile)); serr == nil {
				return cfg, fmt.Errorf("resume: %s holds a checkpoint but no run.json with its settings (dmlbench writes run.json first; this directory was changed by hand): remove %s to start over", out, filepath.Join(out, trainers.CheckpointFile))
			}
			return cfg, fmt.Errorf("resume: %s holds no run to continue (no run.json)", out)
		}
		if err != nil {
			return cfg, fmt.Errorf("resume: %w", err)
		}
		if r.Status == "failed" && len(r.History) == 0 && r.Initial == nil {
			if _, serr := os.Stat(filepath.Join(out, trainers.CheckpointFile)); serr != nil {
				return cfg, fmt.Errorf("resume: the run in %s failed before its first checkpoint: nothing to resume; start it again", out)
			}
		}
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			return cfg, fmt.Errorf("resume: config in %s: %w", path, err)
		}
		rc := cfg
		recorded = &rc
	}
	if err := regularizerFlags(c, &cfg); err != nil {
		return cfg, err
	}
	if _, err := applyConfigFlags(c, &cfg); err != nil {
		return cfg, err
	}
	if recorded == nil && !c.IsSet("batch-size") && !fileKeys["batch-size"] {
		datasetBatchSize(&cfg)
	}
	if recorded != nil {
		if err := checkResumeFlags(*recorded, cfg, out); err != nil {
			return cfg, err
		}
	}
	if cfg.Loss == "" {
		return cfg, usagef("--loss is required (see dmlbench list losses)")
	}
	resolved, err := cfg.Resolve()
	if err != nil {
		return cfg, usageError{err}
	}
	return resolved, nil
}

// checkResumeFlags refuses flags given with --resume that change a setting
// of the recorded run inside the config hash: the checkpoint was trained
// under the recorded value.
func checkResumeFlags(recorded, cfg trainers.Config, out string) error {
	base := recorded.WithDefaults().Hash()
	rv, cv := reflect.ValueOf(&recorded).Elem(), reflect.ValueOf(cfg)
	var bad []string
	for _, f := range trainers.Settings() {
		if reflect.DeepEqual(rv.Field(f.Index).Interface(), cv.Field(f.Index).Interface()) {
			continue
		}
		one := recorded
		reflect.ValueOf(&one).Elem().Field(f.Index).Set(cv.Field(f.Index))
		if one.WithDefaults().Hash() != base {
			bad = append(bad, "--"+f.Flag)
		}
	}
	if len(bad) > 0 {
		return usagef("--resume continues the run recorded in %s, but %s would change its training settings; only %s may change on resume",
			filepath.Join(out, trainers.RunFile), strings.Join(bad, ", "), resumable)
	}
	return nil
}

func runAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("run takes no positional arguments (got %q)", c.Args().First())
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := c.String("out")
	var lock *trainers.RunLock
	if c.Bool("resume") {
		// The recorded configuration is read under the directory's lock, so
		// a run still writing it is reported as such, not as a missing or
		// half-written record.
		if st, err := os.Stat(out); err != nil || !st.IsDir() {
			return fmt.Errorf("resume: %s is not a run directory (no run to continue)", out)
		}
		var err error
		if lock, err = trainers.LockRunDir(out); err != nil {
			return err
		}
		defer lock.Release()
	}
	cfg, err := runConfig(c)
	if err != nil {
		return err
	}
	method, err := methodFlags(*c.Generic("method").(*methodValues))
	if err != nil {
		return err
	}
	backend, err := openBackend(cfg.Backend, metrics.Convention(cfg.Convention), 0, c.App.ErrWriter)
	if err != nil {
		return usageError{err}
	}
	quiet := c.Bool("quiet")
	rep := newRunReporter(quiet, os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	run, err := trainers.RunExperiment(ctx, cfg, out, trainers.ExperimentOptions{
		Resume: c.Bool("resume"), Version: Version, Versions: buildVersions(),
		Progress: rep.progress,
		OnEpoch:  rep.epoch,
		Logf:     func(format string, a ...any) { fmt.Fprintf(c.App.ErrWriter, format+"\n", a...) },
		Lock:     lock, Method: method, Backend: &backend,
	})
	if errors.Is(err, trainers.ErrInterrupted) {
		if _, serr := os.Stat(filepath.Join(out, trainers.CheckpointFile)); serr != nil {
			return fmt.Errorf("training interrupted before the first checkpoint: nothing to resume; start the run again")
		}
		return fmt.Errorf("%w; continue with: %s run --out %s --resume", err, os.Args[0], shellQuote(out))
	}
	var ce *trainers.ConfigError
	if errors.As(err, &ce) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	rep.done(run, filepath.Join(out, trainers.RunFile))
	return nil
}

// methodValues collects the values of a repeated --method flag (whole, not
// split on commas: a regulariser value holds them).
type methodValues []string

func (m *methodValues) Set(v string) error { *m = append(*m, v); return nil }
func (m *methodValues) String() string     { return strings.Join(*m, " ") }

// methodFlag is the repeatable --method flag: each parse collects into a
// value of its own (a cli.GenericFlag would share one across parses).
type methodFlag struct{ cli.GenericFlag }

func (f *methodFlag) Apply(set *flag.FlagSet) error {
	set.Var(&methodValues{}, f.Name, f.Usage)
	return nil
}

// methodFlags parses --method KEY=VALUE values.
func methodFlags(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(vals))
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usagef("--method %q: want KEY=VALUE", v)
		}
		m[strings.TrimSpace(k)] = val
	}
	return m, nil
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+=@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func buildVersions() map[string]string {
	v := map[string]string{"dmlbench": Version, "go": runtime.Version(), "blas": model.BLASName}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "gorgonia.org/gorgonia", "gorgonia.org/tensor", "gonum.org/v1/gonum":
				v[d.Path] = d.Version
			}
		}
	}
	return v
}
