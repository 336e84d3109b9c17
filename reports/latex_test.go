package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/texcheck"
)

// latexReports are the reports every LaTeX layout must fit: the test
// runs and the shipped Omniglot example runs, each with the default
// columns, with and without CIs and a baseline.
func latexReports(t *testing.T) map[string]*Report {
	t.Helper()
	out := map[string]*Report{"golden": goldenReport(t)}
	ex, err := LoadRuns([]string{filepath.Join("..", "docs", "examples", "omniglot", "runs")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][]LoadedRun{"testruns": loadTestRuns(t), "omniglot": ex.Runs}
	for name, runs := range sets {
		for _, v := range []struct {
			suffix string
			opt    Options
		}{
			{"", Options{}},
			{"-ci", Options{CI: 0.95, Bootstrap: 200}},
			{"-baseline", Options{Baseline: "margin/distance"}},
			{"-ci-baseline", Options{Baseline: "margin/distance", CI: 0.95, Bootstrap: 200}},
		} {
			opt := v.opt
			opt.GroupBy = []string{"loss", "miner"}
			rep, err := Aggregate(runs, opt)
			if err != nil {
				t.Fatalf("%s%s: %v", name, v.suffix, err)
			}
			out[name+v.suffix] = rep
		}
	}
	return out
}

// TestLaTeXCompiles: every LaTeX table (default columns, with and without
// CIs and a baseline, published rows) compiles with pdflatex, standalone
// and inside a document that loads booktabs and nothing else (OT1 fonts:
// no \textless and the like), with no \resizebox and no nested tabular,
// and fits: the one-column layout the text width of a one-column article,
// the two-column layout (table*, also with --inline-std) the text width of
// a two-column paper of 237 pt columns. The standalone document embeds no bitmap (Type 3)
// fonts. Skipped without pdflatex (scripts/setup.sh installs it).
func TestLaTeXCompiles(t *testing.T) {
	reps := latexReports(t)
	if ok, why := texcheck.Available(); !ok {
		t.Skip(why)
	}
	dir := t.TempDir()
	for name, rep := range reps {
		for _, layout := range []string{LayoutOneColumn, LayoutTwoColumn, LayoutTwoColumn + "-inline"} {
			fo := FormatOptions{Layout: strings.TrimSuffix(layout, "-inline"), InlineStd: strings.HasSuffix(layout, "-inline")}
			var standalone, plain bytes.Buffer
			sfo := fo
			sfo.Standalone = true
			if err := WriteLaTeX(&standalone, rep, sfo); err != nil {
				t.Fatal(err)
			}
			if err := WriteLaTeX(&plain, rep, fo); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{standalone.String(), plain.String()} {
				if strings.Contains(s, `\resizebox`) || strings.Contains(s, `graphicx`) || strings.Count(s, `\begin{tabular}`) != strings.Count(s, `\begin{table`) {
					t.Errorf("%s: a table needs more than booktabs:\n%s", name, s)
				}
			}
			docs := map[string]string{
				"standalone": standalone.String(),
				"plain":      texcheck.Document(fo.Layout, plain.String()),
			}
			for kind, doc := range docs {
				res, err := texcheck.Compile(dir, name+"-"+layout+"-"+kind, doc)
				if err != nil {
					t.Errorf("%v\n%s", err, res.Log)
					continue
				}
				if len(res.Overfull) > 0 {
					t.Errorf("%s %s %s: tables wider than the text by %v pt", name, layout, kind, res.Overfull)
				}
				if kind == "standalone" && strings.Contains(res.Fonts, "Type 3") {
					t.Errorf("%s %s: bitmap (Type 3) fonts in the PDF:\n%s", name, layout, res.Fonts)
				}
			}
		}
	}
}

// Captions start with a capital, every table has a label, the std can go
// inline, and --decimals sets the digits.
func TestLaTeXCaptionLabelInline(t *testing.T) {
	rep := goldenReport(t)
	var b bytes.Buffer
	if err := WriteLaTeX(&b, rep, FormatOptions{InlineStd: true}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{`\caption{Results on cub200.`, `\label{tab:cub200}`, `\label{tab:cub200-delta}`, `\caption{Differences`, `62.00 $\pm$ 2.00`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "[published]") {
		t.Error("the LaTeX legend names rows marked [published], which LaTeX does not mark so")
	}
	one := 1
	rep1, err := Aggregate(loadTestRuns(t), Options{GroupBy: []string{"loss", "miner"}, Decimals: &one})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteLaTeX(&b, rep1, FormatOptions{InlineStd: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "62.0 $\\pm$ 2.0") {
		t.Errorf("--decimals 1: no 62.0 ± 2.0 in\n%s", b.String())
	}
}

// TestEscaping: one rule per format. Markdown escapes what would end a
// cell or start emphasis, and '<' only where it could open a tag; LaTeX
// escapes its specials and typesets the table symbols in math mode.
func TestEscaping(t *testing.T) {
	for in, want := range map[string]string{
		"p < 0.05":          "p < 0.05",
		"a<b> c|d":          `a\<b> c\|d`,
		"test_emb.npy *x*":  `test\_emb.npy \*x\*`,
		"mean_average_prec": `mean\_average\_prec`,
	} {
		if got := mdEscape(in); got != want {
			t.Errorf("mdEscape(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"p < 0.05; 95% ρ": `p $<$ 0.05; 95\% $\rho$`,
		"a_b & c #1 – ±":  `a\_b \& c \#1 -- $\pm$`,
	} {
		if got := texEscape(in); got != want {
			t.Errorf("texEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
