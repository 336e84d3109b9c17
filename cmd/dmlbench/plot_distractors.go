package main

import (
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/reports/distractors"
	"github.com/dmlbench/dmlbench/reports/plots"
)

// addPlotDistractors adds `plot distractors` to the plot command
// (buildCommands adds plot first).
func addPlotDistractors() {
	var plot *cli.Command
	for _, cmd := range commands {
		if cmd.Name == "plot" {
			plot = cmd
		}
	}
	plot.Subcommands = append(plot.Subcommands, &cli.Command{
		Name:      "distractors",
		Usage:     "metrics against gallery size from eval --gallery-sizes --format json (or --out)",
		UsageText: "dmlbench plot distractors CURVE.json --out FIG [--metrics R@1,MAP@R]",
		Flags: append(plotFigureFlags("distractors", 4),
			&cli.StringFlag{Name: "metrics", Usage: "the curves to draw (default: every metric of the file)"}),
		Action: func(c *cli.Context) error {
			paths, err := reportArgs(c) // flags may follow the file
			if err != nil {
				return err
			}
			if len(paths) != 1 {
				return usagef("plot distractors takes one curve file (eval --gallery-sizes --format json)")
			}
			f, err := os.Open(paths[0])
			if err != nil {
				return err
			}
			defer f.Close()
			curve, err := distractors.ReadJSON(f)
			if err != nil {
				return err
			}
			var keys []string
			if m := c.String("metrics"); m != "" {
				for _, k := range reports.SplitList(m, ",") {
					if !strings.Contains(","+strings.Join(curve.Keys, ",")+",", ","+k+",") {
						return usagef("--metrics %s: the curve holds %s", k, strings.Join(curve.Keys, ", "))
					}
					keys = append(keys, k)
				}
			}
			opt, err := plotOptions(c, "Retrieval against gallery size", "gallery size (items)", "metric (%)")
			if err != nil {
				return err
			}
			opt.LogX = true
			return plots.SaveSeries(c.String("out"), distractors.Series(curve, keys), opt)
		},
	})
}
