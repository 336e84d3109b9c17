package reports

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Formats lists the table formats Write accepts.
var Formats = []string{"markdown", "latex", "terminal", "csv"}

// FormatOptions tune the output of Write.
type FormatOptions struct {
	// Standalone wraps LaTeX tables in a compilable document
	// (\documentclass{article} + booktabs + graphicx).
	Standalone bool
	// Color makes the terminal format print best values in ANSI bold;
	// without it best values carry a trailing " *".
	Color bool
}

// Write renders rep in the named format.
func Write(w io.Writer, rep *Report, format string, fo FormatOptions) error {
	switch strings.ToLower(format) {
	case "markdown", "md":
		return WriteMarkdown(w, rep)
	case "latex", "tex":
		return WriteLaTeX(w, rep, fo.Standalone)
	case "terminal", "text", "term":
		return WriteTerminal(w, rep, fo.Color)
	case "csv":
		return WriteCSV(w, rep)
	}
	return fmt.Errorf("reports: unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// symbols used by the plain-text formats; LaTeX replaces them.
const (
	symPM     = "±"
	symDagger = "†"
	symDash   = "–"
	symDelta  = "Δ"
)

func (t *Table) prec(m string, raw bool) int { return precisionFor(m, raw) }

func ffix(v float64, prec int) string {
	if math.IsNaN(v) {
		return symDash
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if s == "-"+strconv.FormatFloat(0, 'f', prec, 64) {
		s = s[1:]
	}
	return s
}

func fsigned(v float64, prec int) string {
	s := ffix(v, prec)
	if v >= 0 && s != symDash && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// FormatP prints a p-value with three decimals, "<0.001" below that.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return symDash
	case p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// cellParts is one table cell split into pieces so each format can style
// them (bold, escaping).
type cellParts struct {
	main  string // "62.10 ± 0.27" or "62.10" or "–"
	extra string // " (n = 2/3)", " [61.80, 62.40]"
	best  bool
}

func measuredCell(t *Table, r *Row, m string, opt Options, pm string) cellParts {
	s, ok := r.Cells[m]
	if !ok || s.N == 0 {
		return cellParts{main: symDash}
	}
	p := t.prec(m, opt.Raw)
	c := cellParts{main: ffix(s.Mean, p), best: r.Best[m]}
	if s.N > 1 {
		c.main += " " + pm + " " + ffix(s.Std, p)
	}
	if s.N != r.N {
		// Some runs have no finite value (missing or null): left out.
		c.extra += fmt.Sprintf(" (n = %d/%d)", s.N, r.N)
	}
	if opt.CI > 0 && !math.IsNaN(s.CILo) {
		c.extra += " [" + ffix(s.CILo, p) + ", " + ffix(s.CIHi, p) + "]"
	}
	return c
}

func deltaCell(t *Table, i int, m string, opt Options, dagger string) string {
	if i == t.BaselineRow {
		return "baseline"
	}
	r := t.Rows[i]
	c := r.Delta[m]
	if c == nil {
		return symDash
	}
	p := t.prec(m, opt.Raw)
	s := fsigned(c.Delta, p)
	if c.Err != "" {
		s += " (" + c.Err + ")"
	} else {
		if c.Significant {
			s += dagger
		}
		if ps := FormatP(c.P); strings.HasPrefix(ps, "<") {
			s += " (p" + ps + ")"
		} else {
			s += " (p=" + ps + ")"
		}
	}
	if opt.CI > 0 && !math.IsNaN(c.CILo) {
		s += " [" + fsigned(c.CILo, p) + ", " + fsigned(c.CIHi, p) + "]"
	}
	return s
}

func refCell(t *Table, ref ReferenceRow, m string, opt Options, pm string) string {
	v, ok := ref.Metrics[m]
	if !ok {
		return symDash
	}
	p := t.prec(m, opt.Raw)
	if opt.Raw && IsPercentMetric(m) {
		v.Mean /= 100
		v.Std /= 100
	}
	s := ffix(v.Mean, p)
	if !math.IsNaN(v.Std) {
		s += " " + pm + " " + ffix(v.Std, p)
	}
	return s
}

// header returns the column titles: Method, n, then each metric followed
// by its Δ column when the table has a baseline.
func (t *Table) header(delta string) []string {
	h := []string{"Method", "n"}
	for _, m := range t.Metrics {
		h = append(h, m)
		if t.BaselineRow >= 0 {
			h = append(h, delta+" "+m)
		}
	}
	return h
}

// Legend explains the cells of a table in words.
func Legend(rep *Report, t *Table) string {
	opt := rep.Opt
	var parts []string
	src := "final"
	switch opt.Source {
	case "best":
		src = "best-epoch"
	case "initial":
		src = "untrained-model"
	}
	unit := "in %"
	if opt.Raw {
		unit = "as fractions"
	}
	parts = append(parts, fmt.Sprintf("%s test metrics %s (ρ and other non-fraction metrics as is), mean ± sample std (n−1) over the n runs (seeds) of each method", src, unit))
	parts = append(parts, "best mean per column in bold")
	if len(t.Common) > 0 {
		keys := make([]string, 0, len(t.Common))
		for k := range t.Common {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + t.Common[k]
		}
		parts = append(parts, "all rows share "+strings.Join(keys, ", "))
	}
	if partialCells(t) {
		parts = append(parts, "(n = a/b): a of the row's b runs have a value, the others have none (missing or null) and are left out")
	}
	if opt.CI > 0 {
		parts = append(parts, fmt.Sprintf("[lo, hi]: %g%% percentile-bootstrap CI of the mean (%d resamples, seed %d)", opt.CI*100, opt.Bootstrap, opt.Seed))
	}
	if t.BaselineRow >= 0 {
		parts = append(parts, fmt.Sprintf("Δ: difference to the baseline %s, † Welch two-sided t-test p < %g", t.Rows[t.BaselineRow].Label, opt.Alpha))
	}
	if len(t.References) > 0 {
		cites := map[string]bool{}
		var cs []string
		for _, r := range t.References {
			if !cites[r.Citation()] {
				cites[r.Citation()] = true
				cs = append(cs, r.Citation())
			}
		}
		parts = append(parts, "rows marked [published] are quoted from "+strings.Join(cs, "; ")+" (dataset "+t.References[0].Dataset+") and are not ranked")
	}
	return strings.Join(parts, "; ") + "."
}

// WriteMarkdown renders GitHub-flavoured Markdown tables, one section per
// dataset; best values are **bold**.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	for ti, t := range rep.Tables {
		if ti > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n", mdEscape(t.Dataset))
		h := t.header(symDelta)
		writeMDRow(&b, h)
		aligns := make([]string, len(h))
		for i := range aligns {
			aligns[i] = "---:"
		}
		aligns[0] = ":---"
		b.WriteString("| " + strings.Join(aligns, " | ") + " |\n")
		for i, r := range t.Rows {
			label := mdEscape(r.Label)
			if i == t.BaselineRow {
				label += " (baseline)"
			}
			cells := []string{label, strconv.Itoa(r.N)}
			for _, m := range t.Metrics {
				c := measuredCell(t, r, m, rep.Opt, symPM)
				s := c.main
				if c.best {
					s = "**" + s + "**"
				}
				cells = append(cells, s+c.extra)
				if t.BaselineRow >= 0 {
					cells = append(cells, deltaCell(t, i, m, rep.Opt, symDagger))
				}
			}
			writeMDRow(&b, cells)
		}
		for _, ref := range t.References {
			cells := []string{"_" + mdEscape(ref.Approach) + "_ [published: " + mdEscape(ref.Citation()) + "]", symDash}
			for _, m := range t.Metrics {
				cells = append(cells, "_"+refCell(t, ref, m, rep.Opt, symPM)+"_")
				if t.BaselineRow >= 0 {
					cells = append(cells, "")
				}
			}
			writeMDRow(&b, cells)
		}
		b.WriteString("\n" + mdEscape(Legend(rep, t)) + "\n")
	}
	if len(rep.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range rep.Notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMDRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

var mdReplacer = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;")

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// WriteLaTeX renders booktabs tables (\toprule, \midrule, \bottomrule),
// best values in \textbf{}, one table environment per dataset; CIs and
// p-values in \scriptsize on a second line of the cell; tables wider than the line are scaled down
// (graphicx). With standalone the output is a complete landscape document
// (booktabs, graphicx, geometry) that pdflatex compiles.
func WriteLaTeX(w io.Writer, rep *Report, standalone bool) error {
	var b strings.Builder
	if standalone {
		b.WriteString("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n\\usepackage[landscape,margin=1.5cm]{geometry}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n")
	}
	for ti, t := range rep.Tables {
		if ti > 0 {
			b.WriteString("\n")
		}
		h := t.header("$\\Delta$")
		b.WriteString("\\begin{table}[ht]\n\\centering\n")
		fmt.Fprintf(&b, "\\caption{%s: %s}\n", texEscape(t.Dataset), texEscape(Legend(rep, t)))
		wide := len(h) > 8
		if wide {
			// Shrink to the line width only when wider than it.
			b.WriteString("\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n")
		}
		b.WriteString("\\begin{tabular}{l" + strings.Repeat("r", len(h)-1) + "}\n\\toprule\n")
		hs := make([]string, len(h))
		for i, x := range h {
			if i == 1 {
				hs[i] = "$n$"
				continue
			}
			if strings.HasPrefix(x, "$\\Delta$ ") {
				hs[i] = "$\\Delta$ " + texEscape(strings.TrimPrefix(x, "$\\Delta$ "))
				continue
			}
			hs[i] = texEscape(x)
		}
		b.WriteString(strings.Join(hs, " & ") + " \\\\\n\\midrule\n")
		for i, r := range t.Rows {
			label := texEscape(r.Label)
			if i == t.BaselineRow {
				label += " (baseline)"
			}
			cells := []string{label, strconv.Itoa(r.N)}
			for _, m := range t.Metrics {
				c := measuredCell(t, r, m, rep.Opt, "\x00")
				s := texEscape(c.main)
				if c.best {
					s = "\\textbf{" + s + "}"
				}
				cells = append(cells, texStack(texMinus(s), texMinus(texEscape(strings.TrimSpace(c.extra)))))
				if t.BaselineRow >= 0 {
					d := texMinus(texEscape(deltaCell(t, i, m, rep.Opt, "\x01")))
					sub := ""
					if k := strings.Index(d, " ("); k > 0 {
						d, sub = d[:k], d[k+1:]
					}
					cells = append(cells, texStack(d, sub))
				}
			}
			b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
		}
		if len(t.References) > 0 {
			fmt.Fprintf(&b, "\\midrule\n\\multicolumn{%d}{l}{\\emph{Published}} \\\\\n", len(h))
			for _, ref := range t.References {
				cells := []string{texEscape(ref.Approach) + " {\\footnotesize [" + texEscape(ref.Citation()) + "]}", "--"}
				for _, m := range t.Metrics {
					cells = append(cells, "\\emph{"+texEscape(refCell(t, ref, m, rep.Opt, "\x00"))+"}")
					if t.BaselineRow >= 0 {
						cells = append(cells, "")
					}
				}
				b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
			}
		}
		b.WriteString("\\bottomrule\n\\end{tabular}")
		if wide {
			b.WriteString("}")
		}
		b.WriteString("\n\\end{table}\n")
	}
	if len(rep.Notes) > 0 {
		b.WriteString("% Notes:\n")
		for _, n := range rep.Notes {
			b.WriteString("% " + strings.ReplaceAll(n, "\n", " ") + "\n")
		}
	}
	if standalone {
		b.WriteString("\\end{document}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// texStack puts the small second line under the main one in a nested
// right-aligned tabular (base LaTeX only), keeping wide tables narrow.
func texStack(main, small string) string {
	if small == "" {
		return main
	}
	return "\\begin{tabular}[t]{@{}r@{}}" + main + " \\\\ \\scriptsize " + small + "\\end{tabular}"
}

var texNegative = regexp.MustCompile(`(^|[\s\[(])-(\d)`)

// texMinus typesets the sign of negative numbers in a cell as a math minus.
func texMinus(s string) string { return texNegative.ReplaceAllString(s, "${1}$$-$$${2}") }

// texEscape escapes LaTeX specials and maps the Unicode symbols tables use
// to math-mode commands, so that pdflatex needs no extra packages. The
// placeholders \x00 and \x01 stand for ± and † inside cells.
func texEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '&', '%', '$', '#', '_', '{', '}':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '<':
			b.WriteString(`\textless{}`)
		case '>':
			b.WriteString(`\textgreater{}`)
		case '\x00', '±':
			b.WriteString(`$\pm$`)
		case '\x01', '†':
			b.WriteString(`$^\dagger$`)
		case '–':
			b.WriteString(`--`)
		case '−':
			b.WriteString(`$-$`)
		case 'Δ':
			b.WriteString(`$\Delta$`)
		case 'β':
			b.WriteString(`$\beta$`)
		case 'ρ':
			b.WriteString(`$\rho$`)
		case 'γ':
			b.WriteString(`$\gamma$`)
		case 'α':
			b.WriteString(`$\alpha$`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// partialCells reports whether a cell of t averages fewer runs than its row
// holds (some runs have no value).
func partialCells(t *Table) bool {
	for _, r := range t.Rows {
		for _, m := range t.Metrics {
			if s, ok := r.Cells[m]; ok && s.N > 0 && s.N != r.N {
				return true
			}
		}
	}
	return false
}
