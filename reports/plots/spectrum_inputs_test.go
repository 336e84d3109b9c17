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

func TestCheckSpectra(t *testing.T) {
	if err := CheckSpectra("e.npy", "json", "max", 1, 0); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		emb, format, norm string
		m, top            int
	}{{"", "text", "sum", 1, 0}, {"e", "jsn", "sum", 1, 0}, {"e", "text", "mx", 1, 0}, {"e", "text", "sum", 0, 0}, {"e", "text", "sum", 1, -1}} {
		if err := CheckSpectra(a.emb, a.format, a.norm, a.m, a.top); !usage.Is(err) {
			t.Errorf("%+v: %v", a, err)
		}
	}
}
