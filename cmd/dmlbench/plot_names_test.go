package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The paper flags reach the figure: --style paper draws no title unless
// --title; --rename and a names file name the curves (with their run
// counts); --xlabel/--ylabel label the axes; --palette colours the
// series (Okabe–Ito by default); bad values are usage errors.
func TestPlotNamesLabelsPalette(t *testing.T) {
	dir := t.TempDir()
	cub := testRuns + "/cub200"
	names := filepath.Join(dir, "names.txt")
	if err := os.WriteFile(names, []byte("# paper names\ntriplet/distance = Triplet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"--style", "paper"}, []string{"#0072B2"}, []string{">Recall@k<"}},
		{[]string{"--style", "paper", "--title", "Recall@k"}, []string{">Recall@k<"}, nil},
		{[]string{"--rename", "margin/distance=Margin", "--names", names, "--xlabel", "rank k", "--ylabel", "Recall (%)"},
			[]string{">Margin (n = 3)<", ">Triplet (n = 3)<", ">rank k<", ">Recall (%)<"}, []string{">margin/distance"}},
		{[]string{"--palette", "tab10"}, []string{"#1F77B4"}, []string{"#0072B2"}},
		{[]string{"--no-run-counts"}, []string{">margin/distance<"}, []string{"(n = "}},
	} {
		p := filepath.Join(dir, "r.svg")
		if _, errs, code := runCLI(t, append([]string{"plot", "recall", cub, "--group-by", "loss,miner", "--out", p}, c.args...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		b, _ := os.ReadFile(p)
		for _, w := range c.want {
			if !strings.Contains(strings.ToUpper(string(b)), strings.ToUpper(w)) {
				t.Errorf("%v: no %q in the SVG", c.args, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(strings.ToUpper(string(b)), strings.ToUpper(w)) {
				t.Errorf("%v: %q in the SVG", c.args, w)
			}
		}
	}
	for _, bad := range [][]string{{"--palette", "rainbow"}, {"--rename", "nokey"}, {"--names", filepath.Join(dir, "missing.txt")}} {
		if _, errs, code := runCLI(t, append([]string{"plot", "recall", cub, "--out", filepath.Join(dir, "x.svg")}, bad...)...); code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q", bad, code, errs)
		}
	}
}

// report --rename names the rows (the baseline keeps its key) and warns
// of a name that matches no row; --layout, --decimals and --correction
// are checked.
func TestReportPaperFlags(t *testing.T) {
	cub := testRuns + "/cub200"
	out, errs, code := runCLI(t, "report", cub, "--group-by", "loss", "--baseline", "triplet", "--format", "markdown",
		"--rename", "triplet=Triplet", "--rename", "nosuch=X", "--decimals", "1", "--correction", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"| Triplet (baseline) |", "62.0 ± 2.0", "uncorrected", "baseline Triplet"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	if !strings.Contains(errs, `--rename "nosuch" matches no row`) {
		t.Errorf("no warning of the unused name: %q", errs)
	}
	for _, bad := range [][]string{{"--layout", "threecolumn"}, {"--decimals", "11"}, {"--correction", "bonferroni"}} {
		if _, errs, code := runCLI(t, append([]string{"report", cub}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, %q", bad, code, errs)
		}
	}
}

// spectra --out --style paper: a 3.3 × 2.4 in figure without the default
// title; --style is checked.
func TestSpectraStylePaper(t *testing.T) {
	emb, lab := "../../docs/examples/features/test_emb.npy", "../../docs/examples/features/test_labels.npy"
	p := filepath.Join(t.TempDir(), "s.svg")
	if _, errs, code := runCLI(t, "spectra", "--emb", emb, "--labels", lab, "--style", "paper", "--out", p); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `width="237.6pt" height="172.8pt"`) || strings.Contains(string(b), "singular value spectrum") {
		t.Errorf("not a paper figure without title:\n%.300s", b)
	}
	if _, _, code := runCLI(t, "spectra", "--emb", emb, "--style", "poster", "--out", p); code != 2 {
		t.Errorf("--style poster: exit %d", code)
	}
}

// compare with three embeddings: one table per embedding against A, each
// with the max-T column (identical embeddings: p 1), A named by --rename;
// LaTeX tables get distinct labels.
func TestCompareThreeEmbeddings(t *testing.T) {
	F := "../../docs/examples/features/"
	args := []string{"compare", "--emb", F + "test_emb.npy", "--emb", F + "test_emb.npy", "--emb", F + "test_emb.npy",
		"--labels", F + "test_labels.npy", "--metrics", "R@1,MAP@R", "--resamples", "199", "--rename", F + "test_emb.npy=Base"}
	out, errs, code := runCLI(t, append(args, "--format", "markdown")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "| metric | A | B | B − A | 95 % CI | p | p max-T |"); n != 2 {
		t.Errorf("%d tables with a max-T column, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, "| R@1 | 50.50 | 50.50 | +0.00 | [+0.00, +0.00] | 1.000 | 1.000 |") || !strings.Contains(out, "A = Base") {
		t.Errorf("identical embeddings or the name:\n%s", out)
	}
	out, _, _ = runCLI(t, append(args, "--format", "latex")...)
	if !strings.Contains(out, `\label{tab:compare-1}`) || !strings.Contains(out, `\label{tab:compare-2}`) {
		t.Errorf("labels:\n%s", out)
	}
}

// eval --rename names a file's column (LaTeX) and row (markdown).
func TestEvalRename(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--emb", emb, "--labels", lab, "--metrics", "R@1", "--format", "markdown", "-q", "--rename", emb+"=Ours")
	if code != 0 || strings.Count(out, "| Ours | 100.00 |") != 2 {
		t.Errorf("exit %d %s:\n%s", code, errs, out)
	}
}
