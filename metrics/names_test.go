package metrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/suggest"
)

// TestNames: conventions, distances and metric names resolve or fail with
// the nearest name, wrapping suggest.ErrUnknown.
func TestNames(t *testing.T) {
	for in, want := range map[string]Convention{"": Strict, "strict": Strict, "roth": Roth, "pml": PML, "pml3": PML3} {
		if got, err := ParseConvention(in); got != want || err != nil {
			t.Errorf("ParseConvention(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{
		"stric":   "want strict, roth, pml or pml3; did you mean strict?",
		"pytorch": "want strict, roth, pml or pml3 (pytorch-metric-learning is pml)",
		"Roth":    "want strict, roth, pml or pml3; did you mean roth?",
	} {
		if _, err := ParseConvention(in); err == nil || err.Error() != want || !errors.Is(err, suggest.ErrUnknown) {
			t.Errorf("ParseConvention(%q): %v; want %s", in, err, want)
		}
	}
	for _, d := range []string{"", "euclidean", "L2", "ip", "dot", "cosine", "cos"} {
		if err := CheckDistance(d); err != nil {
			t.Errorf("CheckDistance(%q): %v", d, err)
		}
	}
	if err := CheckDistance("cosin"); err == nil || err.Error() != `unknown distance "cosin"; did you mean "cosine"?` {
		t.Errorf("CheckDistance(cosin): %v", err)
	}
	for _, m := range []string{"R@1", "R@16", "MAP@R", "mapr", "precision_at_1", "NMI"} {
		if err := CheckName(m); err != nil {
			t.Errorf("CheckName(%q): %v", m, err)
		}
	}
	if err := CheckName("P@0"); err == nil || errors.Is(err, suggest.ErrUnknown) || !strings.Contains(err.Error(), "positive integer k") {
		t.Errorf("CheckName(P@0): %v", err)
	}
	for in, want := range map[string]string{"R@l": `unknown metric "R@l"; did you mean "R@1"?`, "MAP@RR": `unknown metric "MAP@RR"; did you mean "MAP@R"?`} {
		if err := CheckName(in); err == nil || err.Error() != want || !errors.Is(err, suggest.ErrUnknown) {
			t.Errorf("CheckName(%q): %v; want %s", in, err, want)
		}
	}
}
