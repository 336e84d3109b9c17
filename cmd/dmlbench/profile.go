package main

import (
	"fmt"
	"runtime/pprof"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
)

// withCPUProfile wraps a command action: with --cpuprofile FILE it records a
// Go CPU profile of the whole action into FILE.
func withCPUProfile(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) (err error) {
		path := c.String("cpuprofile")
		if path == "" {
			return action(c)
		}
		f, err := atomicfile.Create(path)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Abort()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if cerr := f.Commit(); cerr != nil && err == nil {
				err = fmt.Errorf("--cpuprofile: %w", cerr)
			}
		}()
		return action(c)
	}
}
