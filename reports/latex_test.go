package reports

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaTeXCompiles: the LaTeX tables (a baseline, CIs, published rows)
// compile with pdflatex, standalone and inside a document that loads
// booktabs and nothing else (OT1 fonts: no \textless and the like), with
// no \resizebox and no nested tabular, and fit the text width of a
// one-column article (no overfull box). Skipped without pdflatex (Debian:
// texlive-latex-base, texlive-latex-recommended).
func TestLaTeXCompiles(t *testing.T) {
	var standalone, plain bytes.Buffer
	if err := WriteLaTeX(&standalone, goldenReport(t), true); err != nil {
		t.Fatal(err)
	}
	if err := WriteLaTeX(&plain, goldenReport(t), false); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{standalone.String(), plain.String()} {
		if strings.Contains(s, `\resizebox`) || strings.Contains(s, `graphicx`) || strings.Count(s, `\begin{tabular}`) != strings.Count(s, `\begin{table}`) {
			t.Errorf("a table needs more than booktabs:\n%s", s)
		}
	}
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Skip("pdflatex not installed")
	}
	dir := t.TempDir()
	docs := map[string]string{
		"standalone.tex": standalone.String(),
		"plain.tex":      "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + plain.String() + "\\end{document}\n",
	}
	for name, doc := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("pdflatex", "-interaction=nonstopmode", "-halt-on-error", name)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("pdflatex %s: %v\n%s", name, err, out)
		}
		log, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, ".tex")+".log"))
		if err != nil || strings.Contains(string(log), "Overfull \\hbox") {
			t.Errorf("%s: a table is wider than the text (%v)", name, err)
		}
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
		if got := EscapeMarkdown(in); got != want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"p < 0.05; 95% ρ": `p $<$ 0.05; 95\% $\rho$`,
		"a_b & c #1 – ±":  `a\_b \& c \#1 -- $\pm$`,
	} {
		if got := EscapeLaTeX(in); got != want {
			t.Errorf("EscapeLaTeX(%q) = %q, want %q", in, got, want)
		}
	}
}
