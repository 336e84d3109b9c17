package reports

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

// An infinite ρ (a rank-deficient embedding, e.g. raw pixels with constant
// border pixels) survives run.json and shows as +Inf in the table instead of
// an empty or smaller-n cell.
func TestInfiniteRhoShownAsSuch(t *testing.T) {
	dir := t.TempDir()
	for i, r := range []record.Run{
		{Schema: 1, Name: "pixels", Dataset: "omniglot", Method: map[string]string{"loss": "pixels"}, Status: "done",
			Final: record.Metrics{"R@1": 0.35, "rho": math.Inf(1)}},
		{Schema: 1, Name: "margin", Dataset: "omniglot", Method: map[string]string{"loss": "margin"}, Status: "done",
			Final: record.Metrics{"R@1": 0.38, "rho": 0.2}},
	} {
		p := filepath.Join(dir, []string{"a", "b"}[i], "run.json")
		if err := record.WriteAtomic(p, r); err != nil {
			t.Fatal(err)
		}
	}
	l, err := LoadRuns([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Aggregate(l.Runs, Options{GroupBy: []string{"loss"}, Metrics: []string{"R@1", "rho"}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, rep, "markdown", FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "+Inf") {
		t.Fatalf("no +Inf cell:\n%s", b.String())
	}
}
