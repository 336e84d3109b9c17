package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers"
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
		var err error
		if cfg, err = trainers.RecordedConfig(out); err != nil {
			return cfg, err
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
		if err := trainers.CheckResume(*recorded, cfg, out); err != nil {
			return cfg, err
		}
	}
	if cfg.Loss == "" {
		return cfg, usagef("--loss is required (see dmlbench list losses)")
	}
	resolved, err := cfg.Resolve()
	if err != nil {
		return cfg, usageError{Err: err}
	}
	return resolved, nil
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
	method, err := trainers.ParseMethod(*c.Generic("method").(*methodValues))
	if err != nil {
		return err
	}
	backend, err := openBackend(cfg.Backend, metrics.Convention(cfg.Convention), 0, c.App.ErrWriter)
	if err != nil {
		return usageError{Err: err}
	}
	quiet := c.Bool("quiet")
	rep := newRunReporter(quiet, os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	run, err := trainers.RunExperiment(ctx, cfg, out, trainers.ExperimentOptions{
		Resume: c.Bool("resume"), Version: Version, Versions: trainers.BuildVersions(Version),
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
		return usageError{Err: err}
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

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+=@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
