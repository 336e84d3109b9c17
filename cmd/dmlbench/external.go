package main

import (
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// The command cells of suite grids (`command:` in place of a loss,
// docs/external.md): the suite runs `dmlbench external-cell --dir DIR
// --command JSON …` as it runs `dmlbench run` for its own trainer (flags
// only, so that the suite checks them as it checks run's).
func addExternalCell() {
	register(&cli.Command{
		Name:      "external-cell",
		Usage:     "run one command cell of a suite grid (what suite executes for a grid with command:)",
		UsageText: "dmlbench external-cell --dir DIR --command JSON --dataset dir:PATH --data PATH --workdir DIR --seed N --epochs E [--params JSON] [--method K=V]",
		Hidden:    true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "the cell's directory"},
			&cli.StringFlag{Name: "command", Usage: "the trainer's argument list, a JSON array of strings"},
			&cli.StringFlag{Name: "dataset", Usage: "the data set's name in run.json (dir:PATH as the suite gives it)"},
			&cli.StringFlag{Name: "data", Usage: "the data set's directory"},
			&cli.StringFlag{Name: "workdir", Usage: "the directory the command runs in (the suite file's)"},
			&cli.Int64Flag{Name: "seed", Usage: "the cell's seed"},
			&cli.IntFlag{Name: "epochs", Usage: "epochs to train"},
			&cli.StringFlag{Name: "params", Value: "{}", Usage: "the settings handed to the command, a JSON object"},
			&cli.StringSliceFlag{Name: "method", Usage: "`KEY=VALUE` method keys of run.json"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "accepted for symmetry with run"},
		},
		Action: externalCellAction,
	})
}

func externalCellAction(c *cli.Context) error {
	dir := c.String("dir")
	var command []string
	if err := json.Unmarshal([]byte(c.String("command")), &command); err != nil || len(command) == 0 || dir == "" {
		return usagef("external-cell: want --dir DIR and --command [\"prog\", \"arg\", …]")
	}
	var params map[string]any
	if err := json.Unmarshal([]byte(c.String("params")), &params); err != nil {
		return usagef("--params: %v", err)
	}
	method, err := trainers.ParseMethod(c.StringSlice("method"))
	if err != nil {
		return err
	}
	if method == nil {
		method = map[string]string{}
	}
	method["trainer"] = "command"
	cfg := trainers.Defaults()
	cfg.Dataset, cfg.Seed, cfg.Epochs = c.String("dataset"), c.Int64("seed"), c.Int("epochs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cell.RunTrainTest(ctx, cell.TrainTest{
		Dir: dir, WorkDir: c.String("workdir"), DataDir: c.String("data"), Command: command, Params: params, Config: cfg,
		Record: &record.Run{Schema: record.SchemaVersion, Version: Version, Name: filepath.Base(dir), Dataset: cfg.Dataset, Method: method, Seed: cfg.Seed},
	})
}
