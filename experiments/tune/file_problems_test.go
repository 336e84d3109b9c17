package tune

import (
	"bytes"
	"testing"

	"github.com/dmlbench/dmlbench/experiments/suite"
)

func TestFileProblems(t *testing.T) {
	var w bytes.Buffer
	one := &suite.ProblemsError{Problems: []string{"a"}}
	if err := FileProblems(&w, "t.yaml", one); err != error(one) || w.Len() != 0 {
		t.Errorf("one problem: %v (stderr %q), want it as it is", err, w.String())
	}
	err := FileProblems(&w, "t.yaml", &suite.ProblemsError{Problems: []string{"a", "b"}})
	if err == nil || err.Error() != "tune t.yaml: 2 problems (listed above); nothing was run" || w.String() != "tune t.yaml: a\ntune t.yaml: b\n" {
		t.Errorf("two problems: %v (stderr %q)", err, w.String())
	}
}
