package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/experiments/suite"
)

// tuneProblems writes the problems of a tune spec that does not check out
// to stderr, one line each ("tune FILE: problem", docs/external.md), and
// returns an error that counts them. One problem, or an error of another
// kind, is returned as it is.
func tuneProblems(c *cli.Context, file string, err error) error {
	var pe *suite.ProblemsError
	if !errors.As(err, &pe) || len(pe.Problems) < 2 {
		return err
	}
	for _, p := range pe.Problems {
		fmt.Fprintf(c.App.ErrWriter, "tune %s: %s\n", file, p)
	}
	return fmt.Errorf("tune %s: %d problems (listed above); nothing was run", file, len(pe.Problems))
}
