package main

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
)

func init() {
	register(&cli.Command{
		Name:      "list",
		Usage:     "list metrics, losses, miners, samplers, archs, backends or datasets",
		UsageText: "dmlbench list metrics|losses|miners|samplers|archs|backends|datasets",
		Description: `Prints every registered method with a one-line definition and its source.

Examples:
   dmlbench list metrics
   dmlbench list losses`,
		Action: func(c *cli.Context) error {
			kind := c.Args().First()
			if kind == "" {
				return usagef("list what? metrics, losses, miners, samplers, archs, backends or datasets")
			}
			return list(kind, c.App.Writer)
		},
	})
}

// listExtensions are provided by other command files (trainer methods, datasets).
var listExtensions []func(kind string, w io.Writer) (bool, error)

func list(kind string, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	defer tw.Flush()
	switch kind {
	case "metrics":
		fmt.Fprintln(tw, "METRIC\tDEFINITION (strict)\tSOURCE")
		for _, m := range metrics.All {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Key, m.Definition, m.Source)
		}
		return nil
	case "backends":
		names := make([]string, 0, len(knn.Backends))
		for n := range knn.Backends {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(tw, n)
		}
		return nil
	}
	for _, ext := range listExtensions {
		if ok, err := ext(kind, tw); ok || err != nil {
			return err
		}
	}
	return usagef("unknown list %q (metrics, losses, miners, samplers, archs, backends, datasets)", kind)
}
