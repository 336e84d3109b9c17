package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/urfave/cli/v2"
)

// withCPUProfile wraps a command action: with --cpuprofile FILE it records a
// Go CPU profile of the whole action into FILE.
func withCPUProfile(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) (err error) {
		path := c.String("cpuprofile")
		if path == "" {
			return action(c)
		}
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("--cpuprofile: %w", cerr)
			}
		}()
		return action(c)
	}
}
