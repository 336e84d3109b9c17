package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WriteLaTeX renders booktabs tables that compile with \usepackage{booktabs}
// alone: one table per dataset, best values in \textbf{}, values not
// significantly different from the best \underline{}d, the std, CIs and
// partial counts on \scriptsize lines under the values (the CI split over
// two lines in the one-column layout), † on a value that differs from the
// baseline, and with a baseline a second table of the differences Δ with
// their adjusted p-values (and CIs). Every table has a caption that starts
// with a capital and a \label (tab:DATASET, tab:DATASET-delta). With
// fo.Standalone the output is a complete document (Latin Modern fonts, so
// the PDF has no bitmap fonts) that pdflatex compiles.
func WriteLaTeX(w io.Writer, rep *Report, fo FormatOptions) error {
	layout, err := CheckLayout(fo.Layout)
	if err != nil {
		return err
	}
	fo.Layout = layout
	var b strings.Builder
	if fo.Standalone {
		class := "{article}\n"
		if layout == LayoutTwoColumn {
			// The page of a two-column paper: 237 pt columns, 22 pt apart.
			class = "[twocolumn]{article}\n\\setlength{\\textwidth}{496pt}\n\\setlength{\\columnsep}{22pt}\n" +
				"\\setlength{\\oddsidemargin}{-13pt}\n\\setlength{\\evensidemargin}{-13pt}\n"
		}
		b.WriteString("\\documentclass" + class + "\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n\\usepackage{lmodern}\n\\usepackage{booktabs}\n\\begin{document}\n")
	}
	for ti, t := range rep.Tables {
		if ti > 0 {
			b.WriteString("\n")
		}
		writeLaTeXMeasured(&b, rep, t, fo)
		if t.BaselineRow >= 0 {
			b.WriteString("\n")
			writeLaTeXDelta(&b, rep, t, fo)
		}
	}
	if len(rep.Notes) > 0 {
		b.WriteString("% Notes:\n")
		for _, n := range rep.Notes {
			b.WriteString("% " + texComment(n) + "\n")
		}
	}
	if fo.Standalone {
		b.WriteString("\\end{document}\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// texTableStart opens a table environment (table*, across both columns,
// in the two-column layout) with its caption and label, in \footnotesize
// with narrower column gaps (base LaTeX), so that a table of Roth et al.
// 2020's six columns fits the text width.
func texTableStart(b *strings.Builder, fo FormatOptions, caption, label string) {
	fmt.Fprintf(b, "\\begin{%s}[ht]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{3pt}\n", texTableEnv(fo))
	fmt.Fprintf(b, "\\caption{%s}\n\\label{%s}\n", capitalize(caption), label)
}

func texTableEnv(fo FormatOptions) string {
	if fo.Layout == LayoutTwoColumn {
		return "table*"
	}
	return "table"
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// TeXLabel is the \label key of dataset's table: "tab:" and the dataset
// name with every character outside [A-Za-z0-9-] replaced by "-".
func TeXLabel(dataset string) string {
	var b strings.Builder
	for _, r := range dataset {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return "tab:" + b.String()
}

// texLegend is the legend in LaTeX: escaped, the near-best and published
// marks named as LaTeX shows them.
func texLegend(rep *Report, t *Table, delta string) string {
	l := texEscape(legend(rep, t, delta))
	l = strings.Replace(l, nearBestWord+":", "\\underline{underlined}:", 1)
	return strings.Replace(l, texEscape(publishedWord), "rows under \\emph{Published}", 1)
}

// splitStd moves the " ± std" of c.main to the front of c.extra, unless
// inline.
func splitStd(c cellParts, inline bool) cellParts {
	if k := strings.Index(c.main, " "+symPM+" "); k >= 0 && !inline {
		c.extra = " " + symPM + c.main[k+len(" "+symPM+" "):] + c.extra
		c.main = c.main[:k]
	}
	return c
}

// writeLaTeXMeasured writes t's table of measured (and published) rows.
func writeLaTeXMeasured(b *strings.Builder, rep *Report, t *Table, fo FormatOptions) {
	delta := ""
	if t.BaselineRow >= 0 {
		delta = fmt.Sprintf("†: differs from the baseline %s, Welch two-sided t-test, %s, p < %g (Δ and p in the next table)",
			t.Rows[t.BaselineRow].Label, CorrectionNote(rep.Opt.Correction, t.Family()), rep.Opt.Alpha)
	}
	texTableStart(b, fo, "results on "+texEscape(t.Dataset)+". "+capitalize(texLegend(rep, t, delta)), TeXLabel(t.Dataset))
	head := []string{"Method", "$n$"}
	for _, m := range t.Metrics {
		head = append(head, TeXMetric(m))
	}
	split := fo.Layout != LayoutTwoColumn || fo.InlineStd
	var rows [][]string
	for i, r := range t.Rows {
		label := texEscape(r.Label)
		if i == t.BaselineRow {
			label += " (baseline)"
		}
		main := []string{label, strconv.Itoa(r.N)}
		var small [][]string
		for _, m := range t.Metrics {
			c := splitStd(measuredCell(t, r, m, rep.Opt, symPM), fo.InlineStd)
			s := texMinus(texEscape(c.main))
			if c.best {
				s = "\\textbf{" + s + "}"
			}
			if c.near {
				s = "\\underline{" + s + "}"
			}
			if d := r.Delta[m]; d != nil && d.Significant {
				s += "$^\\dagger$"
			}
			main = append(main, s)
			small = append(small, texPiecesSplit(c.extra, split))
		}
		rows = append(rows, main)
		rows = append(rows, smallRows(2, small)...)
	}
	rows = append(rows, texReferenceRows(t, rep.Opt, len(head), fo.InlineStd)...)
	writeTabular(b, head, rows)
	b.WriteString("\\end{" + texTableEnv(fo) + "}\n")
}

// texReferenceRows are the published rows of t under a "Published" line.
func texReferenceRows(t *Table, opt Options, ncol int, inline bool) [][]string {
	if len(t.References) == 0 {
		return nil
	}
	var cites []string
	for _, ref := range t.References {
		if !slices.Contains(cites, ref.Citation()) {
			cites = append(cites, ref.Citation())
		}
	}
	rows := [][]string{{"\\midrule"}, {fmt.Sprintf("\\multicolumn{%d}{l}{\\emph{Published: %s}}", ncol, texEscape(strings.Join(cites, "; ")))}}
	for _, ref := range t.References {
		main := []string{texEscape(ref.Approach), "--"}
		var small [][]string
		for _, m := range t.Metrics {
			c := splitStd(cellParts{main: refCell(t, ref, m, opt, symPM)}, inline)
			main = append(main, "\\emph{"+texMinus(texEscape(c.main))+"}")
			small = append(small, texPieces(c.extra))
		}
		rows = append(rows, main)
		rows = append(rows, smallRows(2, small)...)
	}
	return rows
}

// writeLaTeXDelta writes the differences of t's rows to its baseline: Δ
// per metric (with † where the adjusted p < α) and, on \scriptsize lines,
// the adjusted p-value and the CI of Δ. The column heads are the metrics'
// names; the caption says they hold Δ.
func writeLaTeXDelta(b *strings.Builder, rep *Report, t *Table, fo FormatOptions) {
	rest := fmt.Sprintf("; p: Welch two-sided t-test, %s; † p < %g", CorrectionNote(rep.Opt.Correction, t.Family()), rep.Opt.Alpha)
	if rep.Opt.CI > 0 {
		tUsed, bootUsed := deltaMethods(t)
		rest += "; [lo, hi]: " + ciNote(rep.Opt, tUsed, bootUsed, "Δ")
	}
	caption := texEscape(fmt.Sprintf("differences Δ on %s of each method's mean to the baseline %s (units of Table", t.Dataset, t.Rows[t.BaselineRow].Label)) +
		"~\\ref{" + TeXLabel(t.Dataset) + "})" + texEscape(rest+".")
	texTableStart(b, fo, caption, TeXLabel(t.Dataset)+"-delta")
	head := []string{"Method"}
	for _, m := range t.Metrics {
		head = append(head, TeXMetric(m))
	}
	split := fo.Layout != LayoutTwoColumn || fo.InlineStd
	var rows [][]string
	for i, r := range t.Rows {
		if i == t.BaselineRow {
			continue
		}
		main := []string{texEscape(r.Label)}
		var small [][]string
		for _, m := range t.Metrics {
			d, s := deltaParts(t, r, m, rep.Opt)
			main = append(main, texMinus(texEscape(d)))
			small = append(small, texPiecesSplit(s, split))
		}
		rows = append(rows, main)
		rows = append(rows, smallRows(1, small)...)
	}
	writeTabular(b, head, rows)
	b.WriteString("\\end{" + texTableEnv(fo) + "}\n")
}

// texPiecesSplit is texPieces with, when split, an interval "[lo, hi]"
// on two lines ("[lo," and "hi]"), so a column is no wider than its
// mean.
func texPiecesSplit(s string, split bool) []string {
	ps := texPieces(s)
	if !split {
		return ps
	}
	var out []string
	for _, p := range ps {
		if strings.HasPrefix(p, "[") && strings.Contains(p, ", ") {
			k := strings.Index(p, ", ")
			out = append(out, p[:k+1], p[k+2:])
			continue
		}
		out = append(out, p)
	}
	return out
}

// TeXText is s for LaTeX text: specials escaped, the tables' Unicode
// symbols in math mode, the sign of negative numbers a math minus.
func TeXText(s string) string { return texMinus(texEscape(s)) }

// texMetricNames are metric keys whose LaTeX name is not the key: ρ and
// the π_ratio of Roth et al. 2020 §5.
var texMetricNames = map[string]string{
	"rho":        `$\rho$`,
	"dist_ratio": `$\pi_{\mathrm{ratio}}$`,
}

// TeXMetric is metric key's name in a LaTeX table.
func TeXMetric(key string) string {
	if s, ok := texMetricNames[key]; ok {
		return s
	}
	return texEscape(key)
}

// TeXTableOpen and TeXTableClose open and close the table environment of
// layout (table*, across both columns, for LayoutTwoColumn) around a
// tabular, with caption (LaTeX, capitalised here) and label.
func TeXTableOpen(layout, caption, label string) string {
	var b strings.Builder
	texTableStart(&b, FormatOptions{Layout: layout}, caption, label)
	return b.String()
}

// TeXTableClose closes what TeXTableOpen opened.
func TeXTableClose(layout string) string {
	return "\\end{" + texTableEnv(FormatOptions{Layout: layout}) + "}\n"
}

// WriteTeXTabular writes a booktabs tabular of head and rows (already in
// LaTeX): the first column left-aligned, the others right-aligned.
func WriteTeXTabular(b *strings.Builder, head []string, rows [][]string) { writeTabular(b, head, rows) }
