package compare

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/texcheck"
	"github.com/dmlbench/dmlbench/reports"
)

// compare --format latex: symbols typeset (no raw <, a math minus, ρ),
// MAP@R and mAP@C in one row when equal, a caption and a label; it
// compiles and fits both layouts.
func TestCompareLaTeX(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	m, y, _ := embed(r, r, 12, 6, 8, 0.8)
	m2, _, _ := embed(rand.New(rand.NewPCG(2, 2)), r, 12, 6, 8, 2.5)
	a, b := evalPQ(t, m, y), evalPQ(t, m2, y)
	keys := []string{"R@1", "MAP@R", "mAP@C", "rho", "dist_ratio"}
	for _, k := range keys[2:] {
		a.Metrics[k], b.Metrics[k] = 0.5, 0.25
	}
	a.Metrics["mAP@C"], b.Metrics["mAP@C"] = a.Metrics["MAP@R"], b.Metrics["MAP@R"]
	tests, err := Compare(a, b, keys, Options{Resamples: 4999, Seed: 1, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{A: "runs/a_b/test_emb.npy", B: "B", Queries: a.Queries, Classes: a.Classes, Resamples: 999, Seed: 1, Level: 0.95, Tests: tests}
	for _, layout := range []string{reports.LayoutOneColumn, reports.LayoutTwoColumn} {
		var buf bytes.Buffer
		if err := WriteLaTeX(&buf, rep, layout); err != nil {
			t.Fatal(err)
		}
		s := buf.String()
		for _, want := range []string{`\caption{Paired comparison`, `\label{tab:compare}`, `MAP@R = mAP@C &`, `$\rho$ &`, `$\pi_{\mathrm{ratio}}$ &`, `$-$`, `$<$0.001`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: no %q in\n%s", layout, want, s)
			}
		}
		if strings.Contains(s, "rho &") || strings.Contains(s, "dist\\_ratio &") || strings.Contains(s, "\nmAP@C &") || strings.Contains(s, " <0") || strings.Contains(s, " -0.") {
			t.Errorf("%s: raw names, a duplicate row, a raw < or a hyphen minus:\n%s", layout, s)
		}
		if ok, why := texcheck.Available(); !ok {
			t.Skip(why)
		}
		res, err := texcheck.Compile(t.TempDir(), "compare", texcheck.Document(layout, s))
		if err != nil {
			t.Fatalf("%v\n%s", err, res.Log)
		}
		if len(res.Overfull) > 0 {
			t.Errorf("%s: overflows by %v pt", layout, res.Overfull)
		}
	}
}
