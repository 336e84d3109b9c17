package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/fixtures/audit"
)

// addDataAudit adds `data audit` to the data command (buildCommands adds
// data first).
func addDataAudit() {
	for _, c := range commands {
		if c.Name != "data" {
			continue
		}
		c.Subcommands = append(c.Subcommands, &cli.Command{
			Name:        "audit",
			Usage:       "leakage check of a train/test split: exact and near-duplicate rows across the splits, classes in both",
			Description: helpText("data-audit"),
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "dataset", Required: true, Usage: "data set with a training split (see dmlbench list datasets)"},
				&cli.IntFlag{Name: "size", DefaultText: "per data set", Usage: "image side after downsampling"},
				&cli.StringFlag{Name: "path", Usage: "data location override (emoji .npz, fashion-mnist directory)"},
				&cli.BoolFlag{Name: "rgb", Usage: "emoji: keep the colour channels (gray makes emoji that differ only in colour identical)"},
				&cli.Float64Flag{Name: "near", Value: audit.DefaultNear, Usage: "near-duplicate threshold on ‖x − y‖ / max(‖x‖, ‖y‖)"},
				&cli.IntFlag{Name: "show", Value: 5, Usage: "examples listed per finding"},
				&cli.IntFlag{Name: "threads", DefaultText: "all cores", Usage: "worker threads (0 = all cores)"},
			},
			Action: dataAuditAction,
		})
	}
}

func dataAuditAction(c *cli.Context) error {
	if !(c.Float64("near") > 0) {
		return usagef("--near %v: must be positive", c.Float64("near"))
	}
	if c.Int("show") < 0 || c.Int("threads") < 0 {
		return usagef("--show and --threads must be ≥ 0")
	}
	ds, err := fixtures.Load(c.String("dataset"), fixtures.Options{Size: c.Int("size"), Path: c.String("path"), RGB: c.Bool("rgb")})
	if err != nil {
		return err
	}
	rep, err := audit.Run(c.Context, ds.Name, ds.Train, ds.Test, c.Float64("near"), c.Int("threads"))
	if err != nil {
		return err
	}
	rep.Write(c.App.Writer, c.Int("show"))
	if rep.Leaks() {
		return fmt.Errorf("%s: leakage: %d classes in both splits, %d exact and %d near-duplicate test rows", rep.Name, len(rep.Shared), len(rep.Exact), len(rep.Close))
	}
	return nil
}
