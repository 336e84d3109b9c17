package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
	"github.com/dmlbench/dmlbench/trainers/samplers"
)

// suiteChecker checks a suite against this binary: every data set, loss,
// miner and sampler name against its registry, and every cell's arguments
// against the flags of `run` (with the settings they give checked as `run`
// checks them) or `eval`. A name a grid check refused is not reported
// again for each of its cells.
func suiteChecker(app *cli.App) suite.Checker {
	refused := map[string]bool{}
	check := func(kind string, names []string, fold bool) func(string) error {
		return func(v string) error {
			err := suggest.Check(kind, v, names, fold)
			if err != nil {
				refused[v] = true
			}
			return err
		}
	}
	return suite.Checker{
		Dataset: func(v string) error {
			if strings.HasPrefix(v, "dir:") {
				return nil
			}
			return check("data set", fixtures.Names(), false)(v)
		},
		Loss:    check("loss", losses.Names(), false),
		Miner:   check("miner", miners.Names(), false),
		Sampler: check("sampler", samplers.Names(), true),
		Args: func(args []string) error {
			err := checkCellArgs(app, args)
			if name, ok := suggest.UnknownName(err); ok && refused[name] {
				return nil
			}
			return err
		},
	}
}

// checkCellArgs parses a cell's arguments ("run …" or "eval …") with that
// command's flags, as the cell will; a run's settings are then built and
// validated as `run` does (runConfig), short of loading the data.
func checkCellArgs(app *cli.App, args []string) error {
	if len(args) == 0 {
		return errors.New("no command")
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.Name == args[0] {
			cmd = c
		}
	}
	if cmd == nil {
		return fmt.Errorf("unknown command %q", args[0])
	}
	set := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	var names []string
	for _, f := range cmd.Flags {
		if err := f.Apply(set); err != nil {
			return err
		}
		for _, n := range f.Names() {
			names = append(names, "--"+n)
		}
	}
	if err := set.Parse(args[1:]); err != nil {
		return suggest.FlagParseError(err, names)
	}
	if set.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (extra flags are --name value)", set.Arg(0))
	}
	if cmd.Name != "run" {
		return nil
	}
	c := cli.NewContext(app, set, nil)
	c.Command = cmd
	if _, err := runConfig(c); err != nil {
		return err
	}
	_, err := trainers.ParseMethod(*c.Generic("method").(*methodValues))
	return err
}
