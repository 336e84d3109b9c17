package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/record"
	"github.com/dmlbench/dmlbench/reports"
)

// evalFormats are the output formats of eval.
var evalFormats = []string{"table", "json", "markdown", "latex"}

// unitNote states the unit rule of every human-readable output (eval's
// table, Markdown and LaTeX, report's tables, the figures) for the metrics
// shown: a metric that is a fraction in [0, 1] is shown in percent with 2
// decimals, any other (rho, dist_ratio) as is with 4. JSON (eval --format
// json, --out, run.json) holds the fractions as computed.
func unitNote(cols []metricColumn) string {
	var raw []string
	for _, c := range cols {
		if !reports.IsPercentMetric(c.key) {
			raw = append(raw, c.title)
		}
	}
	switch {
	case len(raw) == len(cols):
		return "values as computed (no fraction metric shown)"
	case len(raw) > 0:
		return "metrics in % except " + strings.Join(raw, ", ") + "; JSON holds fractions"
	}
	return "metrics in %; JSON holds fractions"
}

// namedResult is the evaluation of one embedding file.
type namedResult struct {
	name string
	res  *metrics.Result
}

// fmtMetric shows the value of metric key under the unit rule (unitNote):
// percent with 2 decimals for a fraction, 4 decimals otherwise. NaN (a
// mean over no query) is "n/a", ±Inf (ρ of a rank-deficient matrix) is
// shown as such.
func fmtMetric(key string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 0):
		return fmt.Sprint(v)
	case reports.IsPercentMetric(key):
		return strconv.FormatFloat(100*v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// metricColumn is one shown metric: its title and its key in
// Result.Metrics. mAP@C and MAP@R, the same number by definition under the
// strict convention, share one column titled "MAP@R = mAP@C".
type metricColumn struct {
	title string
	key   string
}

// metricColumns lists the metrics of the results in metrics.Keys order,
// mAP@C folded into MAP@R when every result holds the same value for both.
func metricColumns(results []namedResult) []metricColumn {
	keys := map[string]float64{}
	for _, r := range results {
		for k, v := range r.res.Metrics {
			keys[k] = v
		}
	}
	fold := len(results) > 0
	for _, r := range results {
		a, okA := r.res.Metrics["mAP@C"]
		b, okB := r.res.Metrics["MAP@R"]
		if !okA || !okB || math.Float64bits(a) != math.Float64bits(b) {
			fold = false
		}
	}
	var cols []metricColumn
	for _, k := range metrics.Keys(keys) {
		switch {
		case fold && k == "mAP@C":
			continue
		case fold && k == "MAP@R":
			cols = append(cols, metricColumn{"MAP@R = mAP@C", k})
		default:
			cols = append(cols, metricColumn{k, k})
		}
	}
	return cols
}

// writeResults writes the results in format: json (one result), table (a
// metric/value table per file), markdown or latex (one row per file,
// metrics as columns, ready to paste into a paper; LaTeX needs booktabs).
func writeResults(w io.Writer, results []namedResult, format string) error {
	switch format {
	case "json":
		return record.EncodeJSON(w, results[0].res)
	case "markdown":
		return writeMarkdownRows(w, results)
	case "latex":
		return writeLaTeXRows(w, results)
	}
	for i, r := range results {
		if len(results) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, r.name)
		}
		if err := writeTable(w, r.res); err != nil {
			return err
		}
	}
	return nil
}

// writeTable writes one result as a metric/value table, its footer, and
// the per-class table (a second box table) when there is one.
func writeTable(w io.Writer, res *metrics.Result) error {
	t := reports.NewTextTable(w, []string{"metric", "value"})
	cols := metricColumns([]namedResult{{"", res}})
	for _, c := range cols {
		if err := t.Append([]string{c.title, fmtMetric(c.key, res.Metrics[c.key])}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s, %d-d, %d classes, convention %s%s, %.2f s (k-NN %.2f s, k-means %.2f s)\n",
		sizeLine(res), res.Dim, res.Classes, res.Convention, averageNote(res), res.Timings["total"], res.Timings["knn"], res.Timings["kmeans"])
	fmt.Fprintln(w, unitNote(cols))
	pcCols, rows := perClassRows(res)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	pc := reports.NewTextTable(w, append([]string{"class", "queries"}, pcCols...))
	if err := pc.Bulk(rows); err != nil {
		return err
	}
	return pc.Render()
}

// perClassRows are the rows of the per-class table: class, queries, then
// the asked-for k-NN metrics (the columns of Result.Metrics that the
// per-class results hold).
func perClassRows(res *metrics.Result) (cols []string, rows [][]string) {
	if len(res.PerClass) == 0 {
		return nil, nil
	}
	held := map[string]bool{}
	for _, c := range res.PerClass {
		for k := range c.Metrics {
			held[k] = true
		}
	}
	for _, k := range metrics.Keys(res.Metrics) {
		if held[k] {
			cols = append(cols, k)
		}
	}
	for _, c := range res.PerClass {
		row := []string{c.Class, strconv.Itoa(c.Queries)}
		for _, k := range cols {
			v, ok := c.Metrics[k]
			if !ok {
				v = math.NaN()
			}
			row = append(row, fmtMetric(k, v))
		}
		rows = append(rows, row)
	}
	return cols, rows
}

// writeMarkdownRows writes a GitHub Markdown table: one row per file,
// metrics as columns, then a caption line (sizes, convention, unit) and
// each file's per-class table.
func writeMarkdownRows(w io.Writer, results []namedResult) error {
	cols := metricColumns(results)
	fmt.Fprint(w, "| embeddings |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c.title)
	}
	fmt.Fprint(w, "\n| :--- |", strings.Repeat(" ---: |", len(cols)), "\n")
	for _, r := range results {
		fmt.Fprintf(w, "| %s |", markdownEscape(r.name))
		for _, c := range cols {
			fmt.Fprintf(w, " %s |", cellValue(r.res, c.key))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%s.\n", captionLine(results, cols))
	for _, r := range results {
		pcCols, rows := perClassRows(r.res)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nPer class, %s:\n\n| class | queries | %s |\n| :--- | ---: |%s\n", markdownEscape(r.name), strings.Join(pcCols, " | "), strings.Repeat(" ---: |", len(pcCols)))
		for _, row := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	return nil
}

// cellValue is a metric cell: the formatted value, or "–" when the result
// lacks the metric.
func cellValue(res *metrics.Result, key string) string {
	v, ok := res.Metrics[key]
	if !ok {
		return "–"
	}
	return fmtMetric(key, v)
}

// captionLine describes the rows for a caption: sizes, dimension, classes
// and convention (of the first result when all agree), and the unit rule.
func captionLine(results []namedResult, cols []metricColumn) string {
	first := results[0].res
	same := true
	for _, r := range results[1:] {
		same = same && r.res.N == first.N && r.res.Dim == first.Dim && r.res.Classes == first.Classes && r.res.Convention == first.Convention && r.res.Average == first.Average
	}
	if !same {
		return fmt.Sprintf("Convention %s; %s", first.Convention, unitNote(cols))
	}
	return fmt.Sprintf("%s, %d-d, %d classes, convention %s%s; %s", sizeLine(first), first.Dim, first.Classes, first.Convention, averageNote(first), unitNote(cols))
}

// markdownEscape keeps a cell on its row: '|' escaped.
func markdownEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// latexEscape escapes the characters LaTeX treats specially in text.
func latexEscape(s string) string {
	return strings.NewReplacer(`\`, `\textbackslash{}`, "_", `\_`, "%", `\%`, "&", `\&`, "#", `\#`, "$", `\$`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`).Replace(s)
}

// writeLaTeXRows writes a booktabs tabular (\usepackage{booktabs}; nothing
// else): one row per file, metrics as columns, the caption line as a
// comment.
func writeLaTeXRows(w io.Writer, results []namedResult) error {
	cols := metricColumns(results)
	fmt.Fprintf(w, "%% needs \\usepackage{booktabs}; %s\n", captionLine(results, cols))
	fmt.Fprintf(w, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", len(cols)))
	head := []string{"Embeddings"}
	for _, c := range cols {
		head = append(head, latexEscape(c.title))
	}
	fmt.Fprintf(w, "%s \\\\\n\\midrule\n", strings.Join(head, " & "))
	for _, r := range results {
		row := []string{`\texttt{` + latexEscape(r.name) + `}`}
		for _, c := range cols {
			v := cellValue(r.res, c.key)
			if v == "–" {
				v = "--"
			}
			row = append(row, v)
		}
		fmt.Fprintf(w, "%s \\\\\n", strings.Join(row, " & "))
	}
	fmt.Fprint(w, "\\bottomrule\n\\end{tabular}\n")
	for _, r := range results {
		pcCols, rows := perClassRows(r.res)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "%% per class, %s\n\\begin{tabular}{lr%s}\n\\toprule\nClass & Queries", r.name, strings.Repeat("r", len(pcCols)))
		for _, c := range pcCols {
			fmt.Fprintf(w, " & %s", latexEscape(c))
		}
		fmt.Fprint(w, " \\\\\n\\midrule\n")
		for _, row := range rows {
			row[0] = latexEscape(row[0])
			fmt.Fprintf(w, "%s \\\\\n", strings.Join(row, " & "))
		}
		fmt.Fprint(w, "\\bottomrule\n\\end{tabular}\n")
	}
	return nil
}
