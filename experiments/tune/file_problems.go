package tune

import (
	"errors"
	"io"

	"github.com/dmlbench/dmlbench/experiments/suite"
)

// FileProblems writes the problems of a tune spec that does not check out
// to w, one line each ("tune FILE: problem", docs/external.md), and
// returns an error that counts them. One problem, or an error of another
// kind, comes back as it is.
func FileProblems(w io.Writer, file string, err error) error {
	var pe *suite.ProblemsError
	if !errors.As(err, &pe) || len(pe.Problems) < 2 {
		return err
	}
	return pe.List(w, "tune "+file)
}
