package suite

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestFileProblems(t *testing.T) {
	var w bytes.Buffer
	err := FileProblems(&w, "s.yaml", &ProblemsError{Problems: []string{"grid 1: unknown loss"}})
	if !usage.Is(err) || err.Error() != "suite s.yaml: grid 1: unknown loss" || w.Len() != 0 {
		t.Errorf("one problem: %v (stderr %q)", err, w.String())
	}
	err = FileProblems(&w, "s.yaml", &ProblemsError{Problems: []string{"a", "b"}})
	if !usage.Is(err) || err.Error() != "suite s.yaml: 2 problems (listed above); nothing was run" || w.String() != "suite s.yaml: a\nsuite s.yaml: b\n" {
		t.Errorf("two problems: %v (stderr %q)", err, w.String())
	}
	other := errors.New("no such file")
	if err := FileProblems(&w, "s.yaml", other); err != other {
		t.Errorf("another error: %v, want it as it is", err)
	}
}
