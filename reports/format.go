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
	// Layout is the LaTeX page the tables are set for: LayoutOneColumn
	// (default; each table fits the text width of a one-column article)
	// or LayoutTwoColumn (table* across both columns of a two-column
	// paper).
	Layout string
	// InlineStd writes "39.15 ± 1.06" on one line in LaTeX instead of the
	// std on a small line under the mean.
	InlineStd bool
}

// LaTeX layouts of FormatOptions.Layout.
const (
	LayoutOneColumn = "onecolumn"
	LayoutTwoColumn = "twocolumn"
)

// CheckLayout checks a layout name ("" is LayoutOneColumn).
func CheckLayout(s string) (string, error) {
	switch s {
	case "", LayoutOneColumn:
		return LayoutOneColumn, nil
	case LayoutTwoColumn:
		return LayoutTwoColumn, nil
	}
	return "", fmt.Errorf("reports: layout %q: want %s or %s", s, LayoutOneColumn, LayoutTwoColumn)
}

// Write renders rep in the named format.
func Write(w io.Writer, rep *Report, format string, fo FormatOptions) error {
	switch strings.ToLower(format) {
	case "markdown", "md":
		return WriteMarkdown(w, rep)
	case "latex", "tex":
		return WriteLaTeX(w, rep, fo)
	case "terminal", "text", "term":
		return WriteTerminal(w, rep, fo.Color)
	case "csv":
		return WriteCSV(w, rep)
	}
	return fmt.Errorf("reports: unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// nearBestWord and publishedWord are how the plain-text legends name the
// near-best cells and the published rows; LaTeX replaces them.
const (
	nearBestWord  = "underlined"
	publishedWord = "rows marked [published]"
)

// nearBest reports whether a cell of t is marked near-best.
func nearBest(t *Table) bool {
	for _, r := range t.Rows {
		if len(r.NearBest) > 0 {
			return true
		}
	}
	return false
}

// symbols used by the plain-text formats; LaTeX replaces them.
const (
	symPM     = "±"
	symDagger = "†"
	symDash   = "–"
	symDelta  = "Δ"
)

func (t *Table) prec(m string, opt Options) int { return opt.precision(m) }

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
	near  bool // not best, not significantly different from the best
}

func measuredCell(t *Table, r *Row, m string, opt Options, pm string) cellParts {
	s, ok := r.Cells[m]
	if !ok || s.N == 0 {
		return cellParts{main: symDash}
	}
	p := t.prec(m, opt)
	c := cellParts{main: ffix(s.Mean, p), best: r.Best[m], near: r.NearBest[m]}
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
	d, sub := deltaParts(t, t.Rows[i], m, opt)
	d = strings.Replace(d, symDagger, dagger, 1)
	if sub != "" {
		d += " " + sub
	}
	return d
}

// deltaParts are a Δ cell's value (with † when significant) and its
// details: "(p=0.104) [+1.00, +5.00]", "(n<2)".
func deltaParts(t *Table, r *Row, m string, opt Options) (string, string) {
	c := r.Delta[m]
	if c == nil {
		return symDash, ""
	}
	p := t.prec(m, opt)
	s := fsigned(c.Delta, p)
	var sub []string
	if c.Err != "" {
		sub = append(sub, "("+c.Err+")")
	} else {
		if c.Significant {
			s += symDagger
		}
		if ps := FormatP(c.PAdj); strings.HasPrefix(ps, "<") {
			sub = append(sub, "(p"+ps+")")
		} else {
			sub = append(sub, "(p="+ps+")")
		}
	}
	if opt.CI > 0 && !math.IsNaN(c.CILo) {
		sub = append(sub, "["+fsigned(c.CILo, p)+", "+fsigned(c.CIHi, p)+"]")
	}
	return s, strings.Join(sub, " ")
}

func refCell(t *Table, ref ReferenceRow, m string, opt Options, pm string) string {
	v, ok := ref.Metrics[m]
	if !ok {
		return symDash
	}
	p := t.prec(m, opt)
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
	delta := ""
	if t.BaselineRow >= 0 {
		delta = fmt.Sprintf("Δ: difference to the baseline %s; p: Welch two-sided t-test, %s; † p < %g",
			t.Rows[t.BaselineRow].Label, CorrectionNote(rep.Opt.Correction, t.Family()), rep.Opt.Alpha)
	}
	return legend(rep, t, delta)
}

// legend is Legend with the baseline's part as given ("" for none).
func legend(rep *Report, t *Table, delta string) string {
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
	if nearBest(t) {
		parts = append(parts, fmt.Sprintf("%s: not significantly different from the best (Welch two-sided t-test against the best row, p ≥ %g)", nearBestWord, rep.Opt.Alpha))
	}
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
		parts = append(parts, "[lo, hi]: "+ciNote(opt, rep.CITUsed, rep.CIBootstrapUsed, "the mean"))
	}
	if delta != "" {
		parts = append(parts, delta)
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
		parts = append(parts, publishedWord+" are quoted from "+strings.Join(cs, "; ")+" (dataset "+t.References[0].Dataset+") and are not ranked")
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
		for i := range h {
			h[i] = mdEscape(h[i])
		}
		writeMDHeader(&b, h)
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
				if c.near {
					s = "<u>" + s + "</u>"
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

// writeMDHeader writes the header row and the alignment row: the first
// column left-aligned, the others (numbers) right-aligned.
func writeMDHeader(b *strings.Builder, head []string) {
	writeMDRow(b, head)
	b.WriteString("| :---" + strings.Repeat(" | ---:", len(head)-1) + " |\n")
}

// MDText is s for a GitHub Markdown table cell or line (mdEscape): the one
// Markdown escaper of every writer, as TeXText is the LaTeX one.
func MDText(s string) string { return mdEscape(s) }

// mdEscape escapes text for GitHub Markdown (CommonMark): the characters
// that would end a cell or start emphasis or code are backslash-escaped,
// and '<' only where it could open an HTML tag, so "p < 0.05" stays as
// written.
func mdEscape(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\', '|', '*', '_', '`':
			b.WriteByte('\\')
		case '<':
			if i+1 < len(s) && (isASCIILetter(s[i+1]) || strings.IndexByte("/!?", s[i+1]) >= 0) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// texPieces splits the details of a cell ("±1.41 (n = 2/3) [55.00, 57.00]")
// into its pieces, escaped, one per small line.
func texPieces(s string) []string {
	var out []string
	s = strings.TrimSpace(s)
	for s != "" {
		k := len(s)
		for _, sep := range []string{" (", " ["} {
			if j := strings.Index(s, sep); j > 0 && j < k {
				k = j
			}
		}
		out = append(out, texMinus(texEscape(s[:k])))
		s = strings.TrimSpace(s[k:])
	}
	return out
}

// smallRows lays out the small lines under a row: line i holds each
// column's piece i in \scriptsize, after lead empty cells.
func smallRows(lead int, cols [][]string) [][]string {
	n := 0
	for _, c := range cols {
		n = max(n, len(c))
	}
	rows := make([][]string, n)
	for i := range rows {
		rows[i] = make([]string, lead, lead+len(cols))
		for _, c := range cols {
			cell := ""
			if i < len(c) {
				cell = "\\scriptsize " + c[i]
			}
			rows[i] = append(rows[i], cell)
		}
	}
	return rows
}

// writeTabular writes a booktabs tabular: the first column left-aligned,
// the others right-aligned; a row that is the single cell \midrule is
// written as a rule.
func writeTabular(b *strings.Builder, head []string, rows [][]string) {
	b.WriteString("\\begin{tabular}{l" + strings.Repeat("r", len(head)-1) + "}\n\\toprule\n")
	b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for _, r := range rows {
		if len(r) == 1 && r[0] == "\\midrule" {
			b.WriteString("\\midrule\n")
			continue
		}
		b.WriteString(strings.Join(r, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
}

// texComment keeps a text on one LaTeX comment line.
func texComment(s string) string { return strings.ReplaceAll(s, "\n", " ") }

var texNegative = regexp.MustCompile(`(^|[\s\[(])-(\d)`)

// texMinus typesets the sign of negative numbers in a cell as a math minus.
func texMinus(s string) string { return texNegative.ReplaceAllString(s, "${1}$$-$$${2}") }

// texEscape escapes LaTeX specials and maps the Unicode symbols tables use
// to math-mode commands, so that pdflatex needs no extra packages.
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
			b.WriteString(`$<$`)
		case '>':
			b.WriteString(`$>$`)
		case '±':
			b.WriteString(`$\pm$`)
		case '†':
			b.WriteString(`$^\dagger$`)
		case '–':
			b.WriteString(`--`)
		case '−':
			b.WriteString(`$-$`)
		case 'Δ':
			b.WriteString(`$\Delta$`)
		case '≥':
			b.WriteString(`$\geq$`)
		case '≤':
			b.WriteString(`$\leq$`)
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

// ciNote names the confidence interval of what (the mean, Δ) that the
// table's cells got: Student's (Welch's for Δ) t-interval, the percentile
// bootstrap, or each where it applies (Options.CIMethod).
func ciNote(opt Options, tUsed, bootUsed bool, what string) string {
	t := fmt.Sprintf("%g%% t-interval of %s", opt.CI*100, what)
	if what == "Δ" {
		t = fmt.Sprintf("%g%% Welch t-interval of Δ", opt.CI*100)
	}
	boot := fmt.Sprintf("%g%% percentile-bootstrap CI of %s (%d resamples, seed %d)", opt.CI*100, what, opt.Bootstrap, opt.Seed)
	switch {
	case tUsed && bootUsed:
		return fmt.Sprintf("%s where n < %d, else %s", t, BootstrapMinN, boot)
	case bootUsed:
		return boot
	}
	return t
}

// deltaMethods reports which intervals t's differences to the baseline got.
func deltaMethods(t *Table) (tUsed, bootUsed bool) {
	for _, r := range t.Rows {
		for _, c := range r.Delta {
			if c == nil || math.IsNaN(c.CILo) {
				continue
			}
			if c.Bootstrap {
				bootUsed = true
			} else {
				tUsed = true
			}
		}
	}
	return tUsed, bootUsed
}
