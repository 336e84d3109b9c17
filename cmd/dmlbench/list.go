package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
)

func init() {
	register(&cli.Command{
		Name:      "list",
		Usage:     "list metrics, losses, miners, samplers, regularizers, archs, backends or datasets",
		UsageText: "dmlbench list metrics|losses|miners|samplers|regularizers|archs|backends|datasets",
		Description: `Prints every registered method with a one-line definition and its source.

Examples:
   dmlbench list metrics
   dmlbench list losses`,
		Action: func(c *cli.Context) error {
			kind := c.Args().First()
			if kind == "" {
				return usagef("list what? metrics, losses, miners, samplers, regularizers, archs, backends or datasets")
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
		fmt.Fprintln(tw, "BACKEND\tIN THIS BINARY\tSUMMARY")
		for _, b := range []struct{ name, summary string }{
			{"exact", "pure-Go blocked float32 kernel (" + knn.KernelName() + "), exact, deterministic"},
			{"faiss", "faiss IndexFlat on CPU (build with -tags faiss after make faiss)"},
			{"faiss-gpu", "faiss on CUDA (build with -tags faiss,cuda; docs/faiss-gpu.md)"},
		} {
			_, ok := knn.Backends[b.name]
			fmt.Fprintf(tw, "%s\t%s\t%s\n", b.name, map[bool]string{true: "yes", false: "no"}[ok], b.summary)
		}
		return nil
	}
	for _, ext := range listExtensions {
		if ok, err := ext(kind, tw); ok || err != nil {
			return err
		}
	}
	return usagef("unknown list %q (metrics, losses, miners, samplers, regularizers, archs, backends, datasets)", kind)
}
