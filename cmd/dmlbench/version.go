package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/metrics"
)

func addVersion() {
	register(&cli.Command{
		Name:  "version",
		Usage: "print the version, the compiled k-NN backends and the distance kernel in use",
		Description: `Examples:
   dmlbench version`,
		Action: func(c *cli.Context) error {
			names := metrics.Backends.AvailableNames()
			fmt.Fprintf(c.App.Writer, "dmlbench %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(c.App.Writer, "k-NN backends: %s\n", strings.Join(names, ", "))
			for _, l := range versionLines() {
				fmt.Fprintln(c.App.Writer, l)
			}
			return nil
		},
	})
}

// versionLines are version's lines after the backends: the kernels in use,
// faiss and the GPU.
func versionLines() []string { return append(metrics.KernelLines(), gpuLine()) }
