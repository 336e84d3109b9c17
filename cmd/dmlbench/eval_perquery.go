package main

import (
	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports/compare"
)

func evalPerQueryFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "per-query", Usage: "also write every query's k-NN values to `FILE` (CSV; JSON lines if it ends in .jsonl): index, label, one column per k-NN metric; their means are the printed values bit for bit (docs/compare.md)"}
}

// writePerQuery writes --per-query's file, if asked.
func writePerQuery(c *cli.Context, res *metrics.Result) error {
	path := c.String("per-query")
	if path == "" {
		return nil
	}
	if res.PerQuery == nil || len(res.PerQuery.Keys) == 0 {
		return usagef("--per-query holds k-NN metrics (R@k, MAP@R, …); --metrics %s names none", c.String("metrics"))
	}
	return compare.WriteValuesFile(path, res.PerQuery)
}
