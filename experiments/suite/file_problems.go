package suite

import (
	"errors"
	"io"

	"github.com/dmlbench/dmlbench/internal/usage"
)

// FileProblems is the usage error of a suite file that does not check out
// (a *ProblemsError): one problem is the error itself ("suite FILE:
// problem"); several are written to w one per line, and the error counts
// them. Other errors (the file cannot be read, …) come back as they are.
func FileProblems(w io.Writer, file string, err error) error {
	var pe *ProblemsError
	if !errors.As(err, &pe) {
		return err
	}
	if len(pe.Problems) == 1 {
		return usage.Errorf("suite %s: %s", file, pe.Problems[0])
	}
	return usage.Error{Err: pe.List(w, "suite "+file)}
}
