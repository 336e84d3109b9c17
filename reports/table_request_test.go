package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/usage"
)

func TestCheckFormat(t *testing.T) {
	if f, err := CheckFormat("Markdown", "auto"); err != nil || f != "markdown" {
		t.Fatalf("Markdown: %q, %v", f, err)
	}
	for _, c := range [][2]string{{"mkdown", "auto"}, {"csv", "sometimes"}} {
		if _, err := CheckFormat(c[0], c[1]); !usage.Is(err) {
			t.Errorf("%v: %v, want a usage error", c, err)
		}
	}
}

func TestTableRequestBuild(t *testing.T) {
	opt := Options{Metrics: []string{"R@1"}, Source: "final", Alpha: 0.05}
	req := TableRequest{Paths: []string{filepath.Join("testdata", "mixed")}, Options: opt,
		Paper: PaperOptions{Layout: LayoutOneColumn, Correction: CorrectionHolm}, Rename: []string{"nope=Nope"}, Notes: []string{"a note"}}
	var warn bytes.Buffer
	rep, _, err := req.Build(&warn)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), `warning: --rename "nope" matches no row`) {
		t.Errorf("warnings %q: no unmatched --rename", warn.String())
	}
	if rep.Notes[len(rep.Notes)-1] != "a note" {
		t.Errorf("notes %q: the request's note is not last", rep.Notes)
	}
	req.Paper.DecimalsSet, req.Paper.Decimals = true, 11
	if _, _, err := req.Build(&warn); !usage.Is(err) || !strings.Contains(err.Error(), "--decimals") {
		t.Errorf("--decimals 11: %v, want a usage error", err)
	}
}
