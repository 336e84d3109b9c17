package main

import (
	"errors"

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
	return pe.List(c.App.ErrWriter, "tune "+file)
}
