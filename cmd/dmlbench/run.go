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

// runConfig builds the run's configuration from its sources
// (trainers.ConfigSources): the defaults, a --config file or the recorded
// run, then the flags given.
func runConfig(c *cli.Context) (trainers.Config, error) {
	return trainers.ConfigSources{Out: c.String("out"), Resume: c.Bool("resume"), ConfigFile: c.String("config"),
		ConfigSet: c.IsSet("config"), BatchSizeSet: c.IsSet("batch-size"),
		Flags: func(cfg *trainers.Config) error {
			if err := regularizerFlags(c, cfg); err != nil {
				return err
			}
			_, err := applyConfigFlags(c, cfg)
			return err
		}}.Resolve()
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
		var err error
		if lock, err = trainers.LockForResume(out); err != nil {
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
		return trainers.InterruptedError(err, out, os.Args[0])
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
