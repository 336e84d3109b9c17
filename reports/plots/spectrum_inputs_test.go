package plots

import (
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestSpectrumInputsCheck(t *testing.T) {
	ok := SpectrumInputs{Embs: []string{"a", "b"}, Labels: []string{"l"}, PerClass: true, Normalize: "sum"}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []SpectrumInputs{
		{Normalize: "sum"},
		{Embs: []string{"a", "b", "c"}, Labels: []string{"l", "m"}, Normalize: "sum"},
		{Embs: []string{"a"}, Names: []string{"x", "y"}, Normalize: "sum"},
		{Embs: []string{"a"}, PerClass: true, Normalize: "sum"},
		{Runs: 1, Normalize: "mx"},
		{Runs: 1, Normalize: "sum", Top: -1},
	} {
		if err := s.Check(); !usage.Is(err) {
			t.Errorf("%+v: %v", s, err)
		}
	}
}
