package main

import (
	"github.com/dmlbench/dmlbench/reports"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Markdown gives one row per --emb file with the metrics as columns;
// LaTeX one row per metric and a column per file (numbered, the names in
// the caption), so that any number of metrics fits a column; it needs
// booktabs only; the unit rule is stated.
func TestEvalPaperRows(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--emb", emb, "--labels", lab, "--metrics", "R@1,MAP@R,rho", "--format", "latex", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rho := reports.FormatMetric("rho", *evalJSONOut(t, "--emb", emb, "--labels", lab, "--metrics", "rho", "-q").Metrics["rho"])
	for _, want := range []string{"R@1 & 100.00 & 100.00 \\\\", "MAP@R & 100.00 & 100.00 \\\\", `$\rho$ & ` + rho + " & " + rho + ` \\`,
		`Metric & (1) & (2) \\`, `\label{tab:eval}`, "metrics in \\% except rho"} {
		if !strings.Contains(out, want) {
			t.Errorf("latex lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "graphicx") || !strings.Contains(out, `\caption{Evaluation of (1) `) {
		t.Errorf("latex caption or packages:\n%s", out)
	}
	out, _, code = runCLI(t, "eval", "--emb", emb, "--emb", emb, "--labels", lab, "--metrics", "R@1,NMI", "--format", "markdown", "-q")
	if code != 0 || !strings.HasPrefix(out, "| embeddings | R@1 | NMI |\n| :--- | ---: | ---: |\n| "+emb+" | 100.00 | ") ||
		strings.Count(out, "| "+emb+" |") != 2 {
		t.Errorf("markdown rows:\n%s", out)
	}
	// A repeatable --emb takes a file name with a comma as one name.
	comma := filepath.Join(filepath.Dir(emb), "a,b.npy")
	if err := os.Link(emb, comma); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := runCLI(t, "eval", "--emb", comma, "--labels", lab, "--metrics", "R@1", "--format", "markdown", "-q"); code != 0 || !strings.Contains(out, "a,b.npy | 100.00 |") {
		t.Errorf("--emb with a comma: exit %d %s\n%s", code, errs, out)
	}
	_, errs, code = runCLI(t, "eval", "--emb", emb, "--emb", emb, "--labels", lab, "--format", "json")
	if code != 2 || !strings.Contains(errs, "--format json scores one --emb file") {
		t.Errorf("json of two files: exit %d, %s", code, errs)
	}
}

// Under strict, mAP@C and MAP@R are one number: one row says so. Under
// roth they differ in general and keep their own rows.
func TestEvalFoldsMAPCIntoMAPR(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, _, _ := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--metrics", "mAP@C,MAP@R", "-q")
	if !strings.Contains(out, "MAP@R = mAP@C") || strings.Contains(out, "│ mAP@C ") {
		t.Errorf("strict:\n%s", out)
	}
}

// --per-class: a second box table (no Markdown under the box table) with
// the k-NN metrics asked for and no others; with no k-NN metric asked, a
// usage error instead of an empty table.
func TestEvalPerClassCoherent(t *testing.T) {
	_, emb, lab := fixtureFiles(t)
	out, errs, code := runCLI(t, "eval", "--emb", emb, "--labels", lab, "--metrics", "R@1,NMI", "--per-class", "-q")
	if code != 0 || strings.Contains(out, "|---") || strings.Count(out, "┌") != 2 {
		t.Fatalf("exit %d %s:\n%s", code, errs, out)
	}
	perClass := out[strings.LastIndex(out, "┌"):]
	if !strings.Contains(perClass, "│ class │ queries │  R@1   │") || strings.Contains(perClass, "NMI") || strings.Contains(perClass, "MAP@R") {
		t.Errorf("per-class table:\n%s", perClass)
	}
	out, errs, code = runCLI(t, "eval", "--emb", emb, "--labels", lab, "--metrics", "NMI", "--per-class", "-q")
	if code != 2 || out != "" || !strings.Contains(errs, "--per-class reports k-NN metrics") {
		t.Errorf("--per-class --metrics NMI: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
