// Package texcheck compiles LaTeX snippets with pdflatex in the page
// layouts papers use, for tests that promise a table fits: a one-column
// article (text width 345 pt) and a two-column paper whose columns are
// 237 pt wide (ACM, IEEE and CVPR-like: 2 × 237 pt + 22 pt gap).
package texcheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Layouts of Document.
const (
	OneColumn = "onecolumn"
	TwoColumn = "twocolumn"
)

// Available reports whether pdflatex and the packages the documents load
// (booktabs, lmodern) are installed; why says what is missing.
func Available() (ok bool, why string) {
	if _, err := exec.LookPath("pdflatex"); err != nil {
		return false, "pdflatex not installed (Debian: texlive-latex-base, texlive-latex-recommended, texlive-fonts-recommended, lmodern)"
	}
	if _, err := exec.LookPath("kpsewhich"); err == nil {
		for _, f := range []string{"booktabs.sty", "lmodern.sty"} {
			if out, err := exec.Command("kpsewhich", f).Output(); err != nil || len(strings.TrimSpace(string(out))) == 0 {
				return false, f + " not installed (Debian: texlive-latex-recommended, lmodern)"
			}
		}
	}
	return true, ""
}

// Document wraps body (tables, not a whole document) in a document of
// layout that loads what the tables may need: booktabs only.
func Document(layout, body string) string {
	pre := "\\documentclass{article}\n"
	if layout == TwoColumn {
		pre = "\\documentclass[twocolumn]{article}\n\\setlength{\\textwidth}{496pt}\n\\setlength{\\columnsep}{22pt}\n\\setlength{\\columnwidth}{237pt}\n\\setlength{\\oddsidemargin}{-20pt}\n"
	}
	return pre + "\\usepackage{booktabs}\n\\begin{document}\n" + body + "\\end{document}\n"
}

var overfull = regexp.MustCompile(`Overfull \\hbox \(([0-9.]+)pt too wide\)`)

// Result is one compilation.
type Result struct {
	Log string
	// Overfull lists how far each overfull box sticks out, in pt.
	Overfull []string
	// Fonts is pdffonts' listing of the PDF ("" without pdffonts).
	Fonts string
}

// Compile runs pdflatex on doc in dir as name.tex (twice, for \ref) and
// returns its log; err when pdflatex fails.
func Compile(dir, name, doc string) (Result, error) {
	tex := filepath.Join(dir, name+".tex")
	if err := os.WriteFile(tex, []byte(doc), 0o644); err != nil {
		return Result{}, err
	}
	for range 2 {
		cmd := exec.Command("pdflatex", "-interaction=nonstopmode", "-halt-on-error", name+".tex")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return Result{Log: string(out)}, fmt.Errorf("pdflatex %s: %v", name, err)
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil {
		return Result{}, err
	}
	r := Result{Log: string(log)}
	for _, m := range overfull.FindAllStringSubmatch(r.Log, -1) {
		r.Overfull = append(r.Overfull, m[1])
	}
	if _, err := exec.LookPath("pdffonts"); err == nil {
		out, _ := exec.Command("pdffonts", filepath.Join(dir, name+".pdf")).Output()
		r.Fonts = string(out)
	}
	return r, nil
}
