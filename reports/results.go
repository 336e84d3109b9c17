package reports

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/metrics"
	"slices"
)

// ResultFormats are the formats WriteResults accepts.
var ResultFormats = []string{"table", "json", "markdown", "latex"}

// NamedResult is the evaluation of one embedding file, named for its row.
type NamedResult struct {
	Name   string
	Result *metrics.Result
}

// WriteResults writes evaluation results (`dmlbench eval`) in format: json
// (one result, as computed), table (a metric/value box table per result),
// markdown or latex (one row per result, metrics as columns, ready to paste
// into a paper; LaTeX needs booktabs only). Every format but json follows
// the unit rule (units.go) and says so.
func WriteResults(w io.Writer, results []NamedResult, format string) error {
	if len(results) == 0 {
		return fmt.Errorf("reports: no result to write")
	}
	switch format {
	case "json":
		return record.EncodeJSON(w, results[0].Result)
	case "markdown":
		return writeResultsMarkdown(w, results)
	case "latex":
		return writeResultsLaTeX(w, results)
	case "table":
		for i, r := range results {
			if len(results) > 1 {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintln(w, r.Name)
			}
			if err := writeResultTable(w, r.Result); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("reports: unknown result format %q (want one of %s)", format, strings.Join(ResultFormats, ", "))
}

// maxTeXHeadRunes is the longest result name a LaTeX column head shows;
// a longer one is numbered and named in the caption.
const maxTeXHeadRunes = 16

// column is one shown metric: its title and its key in Result.Metrics.
type column struct {
	title string
	key   string
}

// resultColumns lists the metrics of the results in metrics.Keys order. A
// metric equal by definition to another (Descriptor.SameAs: mAP@C and
// MAP@R) shares that one's column, titled "MAP@R = mAP@C", when every
// result holds the same value for both, bit for bit.
func resultColumns(results []NamedResult) []column {
	keys := map[string]float64{}
	for _, r := range results {
		for k, v := range r.Result.Metrics {
			keys[k] = v
		}
	}
	folded := map[string]string{} // the metric kept → the one folded into it
	for k := range keys {
		d, ok := metrics.Lookup(k)
		if !ok || d.SameAs == "" {
			continue
		}
		same := true
		for _, r := range results {
			a, okA := r.Result.Metrics[k]
			b, okB := r.Result.Metrics[d.SameAs]
			same = same && okA && okB && math.Float64bits(a) == math.Float64bits(b)
		}
		if same {
			folded[d.SameAs] = k
		}
	}
	var cols []column
	for _, k := range metrics.Keys(keys) {
		if s := sameAs(k); s != "" && folded[s] == k {
			continue
		}
		title := metrics.Title(k, results[0].Result)
		for _, r := range results[1:] {
			if metrics.Title(k, r.Result) != title {
				title = k
			}
		}
		if f, ok := folded[k]; ok {
			title += " = " + f
		}
		cols = append(cols, column{title, k})
	}
	return cols
}

// sameAs is the metric k folds into, "" for none.
func sameAs(k string) string {
	d, _ := metrics.Lookup(k)
	return d.SameAs
}

func columnKeys(cols []column) (keys, titles []string) {
	for _, c := range cols {
		keys, titles = append(keys, c.key), append(titles, c.title)
	}
	return keys, titles
}

// writeResultTable writes one result as a metric/value box table, its
// footer, and the per-class table (a second box table) when there is one.
func writeResultTable(w io.Writer, res *metrics.Result) error {
	t := NewTextTable(w, []string{"metric", "value"})
	cols := resultColumns([]NamedResult{{"", res}})
	for _, c := range cols {
		if err := t.Append([]string{c.title, FormatMetric(c.key, res.Metrics[c.key])}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s, %d-d, %d classes, convention %s%s, %.2f s (k-NN %.2f s, k-means %.2f s)\n",
		sizeLine(res), res.Dim, res.Classes, res.Convention, averageNote(res), res.Timings["total"], res.Timings["knn"], res.Timings["kmeans"])
	fmt.Fprintln(w, UnitNote(columnKeys(cols)))
	pcCols, rows := perClassRows(res)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	pc := NewTextTable(w, append([]string{"class", "queries"}, pcCols...))
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
			row = append(row, FormatMetric(k, v))
		}
		rows = append(rows, row)
	}
	return cols, rows
}

// resultCell is a metric cell: the formatted value, or "–" when the result
// lacks the metric.
func resultCell(res *metrics.Result, key string) string {
	v, ok := res.Metrics[key]
	if !ok {
		return symDash
	}
	return FormatMetric(key, v)
}

// sizeLine describes who searched what, for the table footers.
func sizeLine(res *metrics.Result) string {
	if res.Queries == res.N && res.Gallery == res.N-1 {
		return fmt.Sprintf("%d items (each searches the other %d)", res.N, res.Gallery)
	}
	return fmt.Sprintf("%d queries, gallery of %d", res.Queries, res.Gallery)
}

// averageNote names per-class averaging in the footers.
func averageNote(res *metrics.Result) string {
	if res.Average == metrics.PerClass {
		return ", k-NN metrics averaged per class"
	}
	return ""
}

// captionLine describes the rows for a caption: sizes, dimension, classes
// and convention (of the first result when all agree), and the unit rule.
func captionLine(results []NamedResult, cols []column) string {
	first := results[0].Result
	same := true
	for _, r := range results[1:] {
		x := r.Result
		same = same && x.N == first.N && x.Dim == first.Dim && x.Classes == first.Classes && x.Convention == first.Convention && x.Average == first.Average
	}
	if !same {
		return fmt.Sprintf("Convention %s; %s", first.Convention, UnitNote(columnKeys(cols)))
	}
	return fmt.Sprintf("%s, %d-d, %d classes, convention %s%s; %s", sizeLine(first), first.Dim, first.Classes, first.Convention, averageNote(first), UnitNote(columnKeys(cols)))
}

// writeResultsMarkdown writes a GitHub Markdown table: one row per result,
// metrics as columns, then a caption line (sizes, convention, unit) and
// each result's per-class table.
func writeResultsMarkdown(w io.Writer, results []NamedResult) error {
	var b strings.Builder
	cols := resultColumns(results)
	head := []string{"embeddings"}
	for _, c := range cols {
		head = append(head, mdEscape(c.title))
	}
	writeMDHeader(&b, head)
	for _, r := range results {
		row := []string{mdEscape(r.Name)}
		for _, c := range cols {
			row = append(row, resultCell(r.Result, c.key))
		}
		writeMDRow(&b, row)
	}
	fmt.Fprintf(&b, "\n%s.\n", mdEscape(captionLine(results, cols)))
	for _, r := range results {
		pcCols, rows := perClassRows(r.Result)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nPer class, %s:\n\n", mdEscape(r.Name))
		head := []string{"class", "queries"}
		for _, c := range pcCols {
			head = append(head, mdEscape(c))
		}
		writeMDHeader(&b, head)
		for _, row := range rows {
			row[0] = mdEscape(row[0])
			writeMDRow(&b, row)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeResultsLaTeX writes a table (\usepackage{booktabs}; nothing else)
// with a caption and the label tab:eval that fits the text width of a
// one-column article however many metrics there are: one row per metric
// and one column per result (named (1), (2), … in the head and the
// caption when a name is long), then each result's per-class tabular.
func writeResultsLaTeX(w io.Writer, results []NamedResult) error {
	var b strings.Builder
	cols := resultColumns(results)
	head := []string{"Metric"}
	var key []string
	for i, r := range results {
		name := r.Name
		if utf8.RuneCountInString(name) > maxTeXHeadRunes {
			key = append(key, fmt.Sprintf("(%d) %s", i+1, name))
			name = fmt.Sprintf("(%d)", i+1)
		}
		head = append(head, texEscape(name))
	}
	var rows [][]string
	for _, c := range cols {
		row := []string{TeXMetric(c.title)}
		if c.title != c.key {
			row[0] = texEscape(c.title)
		}
		for _, r := range results {
			row = append(row, texMinus(texEscape(resultCell(r.Result, c.key))))
		}
		rows = append(rows, row)
	}
	caption := "evaluation: " + captionLine(results, cols)
	if len(key) > 0 {
		caption = "evaluation of " + strings.Join(key, "; ") + ": " + captionLine(results, cols)
	}
	b.WriteString(TeXTableOpen(LayoutOneColumn, texEscape(caption+"."), "tab:eval"))
	writeTabular(&b, head, rows)
	b.WriteString(TeXTableClose(LayoutOneColumn))
	for _, r := range results {
		pcCols, pcRows := perClassRows(r.Result)
		if len(pcRows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%% per class, %s\n", texComment(r.Name))
		head := []string{"Class", "Queries"}
		for _, c := range pcCols {
			head = append(head, texEscape(c))
		}
		for _, row := range pcRows {
			for i := range row {
				row[i] = texMinus(texEscape(row[i]))
			}
		}
		writeTabular(&b, head, pcRows)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CheckResultOutputs refuses eval's outputs that its inputs cannot give
// (usage errors): a format not in ResultFormats, and with several
// embedding files (files), one JSON result, an --out file, or a
// refinement (refine), each of which takes one file.
func CheckResultOutputs(format string, files int, out, refine string) error {
	if !slices.Contains(ResultFormats, format) {
		return usage.Errorf("--format must be table, json, markdown or latex (got %q)%s", format, suggest.Hint(format, ResultFormats))
	}
	if files <= 1 {
		return nil
	}
	switch {
	case format == "json":
		return usage.Errorf("--format json scores one --emb file (got %d); run eval once per file, or use --format markdown|latex for one row per file", files)
	case out != "":
		return usage.Errorf("--out writes one result; it takes one --emb file (got %d)", files)
	case refine != "":
		return usage.Errorf("--refine takes one --emb file (got %d)", files)
	}
	return nil
}
