package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
)

// Report is one comparison as written: the tests and what they rest on.
type Report struct {
	A, B      string // names of the two embeddings
	Queries   int
	Classes   int
	Resamples int
	Seed      uint64
	Level     float64
	Average   string
	Tests     []Test
	// Label is the LaTeX \label of the table ("": tab:compare).
	Label string
	// Family is the number of embeddings compared with A when the
	// p-values are max-T adjusted over all of them (CompareMany); 0 else.
	Family int
}

type jsonTest struct {
	A       *float64    `json:"a"`
	B       *float64    `json:"b"`
	Diff    *float64    `json:"diff"`
	CI      *[2]float64 `json:"ci"`
	P       *float64    `json:"p"`
	MDD     *float64    `json:"mdd,omitempty"`
	Classes int         `json:"classes,omitempty"`
	Why     string      `json:"not_testable,omitempty"`
}

// num is x for JSON: nil (null) when not finite.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// WriteJSON writes {"a", "b", "queries", "classes", "resamples", "seed",
// "level", "average", "metrics": {key: {"a", "b", "diff", "ci": [lo, hi],
// "p", "mdd", "classes"}}}; an untestable metric has ci and p null and
// says why. Values are fractions, as eval's JSON.
func WriteJSON(w io.Writer, r *Report) error {
	ms := map[string]jsonTest{}
	for _, t := range r.Tests {
		j := jsonTest{A: num(t.A), B: num(t.B), Diff: num(t.Diff)}
		if t.Testable {
			j.CI = &[2]float64{t.Lo, t.Hi}
			j.P, j.MDD, j.Classes = num(t.P), num(t.MDD), t.Classes
		} else {
			j.Why = t.Why
		}
		ms[t.Key] = j
	}
	out := struct {
		A         string              `json:"a"`
		B         string              `json:"b"`
		Queries   int                 `json:"queries"`
		Classes   int                 `json:"classes"`
		Resamples int                 `json:"resamples"`
		Seed      uint64              `json:"seed"`
		Level     float64             `json:"level"`
		Average   string              `json:"average"`
		Metrics   map[string]jsonTest `json:"metrics"`
	}{r.A, r.B, r.Queries, r.Classes, r.Resamples, r.Seed, r.Level, r.Average, ms}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// cell formats x under eval's unit rule: percent with 2 decimals for a
// fraction metric, 4 decimals otherwise; signed when sign is set.
func cell(key string, x float64, sign bool) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	prec := 4
	if reports.IsPercentMetric(key) {
		x, prec = 100*x, 2
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if sign && x >= 0 && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// folded maps the metric kept to the one folded into its row: a metric
// equal by definition to another (metrics.Descriptor.SameAs: mAP@C and
// MAP@R) whose A and B agree with it bit for bit shares its row.
func (r *Report) folded() (into map[string]string, dropped map[string]bool) {
	byKey := map[string]Test{}
	for _, t := range r.Tests {
		byKey[t.Key] = t
	}
	into, dropped = map[string]string{}, map[string]bool{}
	for _, t := range r.Tests {
		d, ok := metrics.Lookup(t.Key)
		if !ok || d.SameAs == "" {
			continue
		}
		o, ok := byKey[d.SameAs]
		if ok && math.Float64bits(o.A) == math.Float64bits(t.A) && math.Float64bits(o.B) == math.Float64bits(t.B) {
			into[d.SameAs], dropped[t.Key] = t.Key, true
		}
	}
	return into, dropped
}

// maxT reports whether the tests carry max-T adjusted p-values.
func (r *Report) maxT() bool {
	for _, t := range r.Tests {
		if t.Testable && !math.IsNaN(t.PMaxT) && t.PMaxT > 0 {
			return true
		}
	}
	return false
}

// rows are the table rows: metric, A, B, B − A, interval, p (and the
// max-T adjusted p when the report has one). title names a metric in the
// format.
func (r *Report) rows(title func(string) string) (header []string, rows [][]string) {
	header = []string{"metric", "A", "B", "B − A", fmt.Sprintf("%g %% CI", 100*r.Level), "p"}
	adj := r.maxT()
	if adj {
		header = append(header, "p max-T")
	}
	into, dropped := r.folded()
	for _, t := range r.Tests {
		if dropped[t.Key] {
			continue
		}
		ci, p, pm := "not tested", "–", "–"
		if t.Testable {
			ci = "[" + cell(t.Key, t.Lo, true) + ", " + cell(t.Key, t.Hi, true) + "]"
			p = reports.FormatP(t.P)
			pm = reports.FormatP(t.PMaxT)
		}
		name := title(t.Key)
		if f, ok := into[t.Key]; ok {
			name += " = " + title(f)
		}
		row := []string{name, cell(t.Key, t.A, false), cell(t.Key, t.B, false), cell(t.Key, t.Diff, true), ci, p}
		if adj {
			row = append(row, pm)
		}
		rows = append(rows, row)
	}
	return header, rows
}

func plainTitle(k string) string { return k }

// Footer is what the table rests on, and the minimum detectable
// difference of every tested metric.
func (r *Report) Footer() []string {
	avg := "mean over queries"
	if r.Average == "per-class" {
		avg = "mean of class means"
	}
	lines := []string{
		fmt.Sprintf("A = %s, B = %s; %d queries in %d classes, paired (metrics: %s; fractions in %%)", r.A, r.B, r.Queries, r.Classes, avg),
		fmt.Sprintf("CI: percentile bootstrap over classes, %d resamples; p: sign-flip permutation test over classes, %d permutations; seed %d", r.Resamples, r.Resamples, r.Seed),
	}
	if r.maxT() {
		lines = append(lines, fmt.Sprintf("p max-T: adjusted over every tested metric of the %d embeddings compared with A, class-level sign-flip max-T (Westfall and Young 1993), %d permutations: family-wise error ≤ α", r.Family, r.Resamples))
	}
	var mdd, whys []string
	untested := map[string][]string{} // keys by the reason they are not tested
	for _, t := range r.Tests {
		switch {
		case t.Testable:
			mdd = append(mdd, t.Key+" "+strings.TrimPrefix(cell(t.Key, t.MDD, false), "+"))
		default:
			if untested[t.Why] == nil {
				whys = append(whys, t.Why)
			}
			untested[t.Why] = append(untested[t.Why], t.Key)
		}
	}
	if len(mdd) > 0 {
		lines = append(lines, "minimum detectable difference (α = 0.05, 80 % power, 2.80 bootstrap SE): "+strings.Join(mdd, ", "))
	}
	for _, why := range whys {
		lines = append(lines, "not tested ("+why+"): "+strings.Join(untested[why], ", "))
	}
	return lines
}

// WriteTable writes the box table of eval's table format and the footer.
func WriteTable(w io.Writer, r *Report) error {
	header, rows := r.rows(plainTitle)
	t := reports.NewTextTable(w, header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, l := range r.Footer() {
		fmt.Fprintln(w, l)
	}
	return nil
}

// WriteMarkdown writes a GitHub Markdown table and the footer lines.
func WriteMarkdown(w io.Writer, r *Report) error {
	header, rows := r.rows(plainTitle)
	for i := range header {
		header[i] = reports.MDText(header[i])
	}
	fmt.Fprintf(w, "| %s |\n| :--- |%s\n", strings.Join(header, " | "), strings.Repeat(" ---: |", len(header)-1))
	for _, row := range rows {
		for i := range row {
			row[i] = reports.MDText(row[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
	for _, l := range r.Footer() {
		fmt.Fprintf(w, "%s.  \n", reports.MDText(l))
	}
	return nil
}

// WriteLaTeX writes a table (\usepackage{booktabs}) whose caption holds
// the footer lines, labelled Report.Label; layout is
// reports.LayoutOneColumn or reports.LayoutTwoColumn (table*).
func WriteLaTeX(w io.Writer, r *Report, layout string) error {
	if _, err := reports.CheckLayout(layout); err != nil {
		return err
	}
	header, rows := r.rows(reports.TeXMetric)
	for i := range header {
		header[i] = reports.TeXText(header[i])
	}
	for _, row := range rows {
		for i := 1; i < len(row); i++ {
			row[i] = reports.TeXText(row[i])
		}
	}
	caption := "paired comparison of B with A. " + reports.TeXText(strings.Join(r.Footer(), ". ")+".")
	var b strings.Builder
	label := r.Label
	if label == "" {
		label = "tab:compare"
	}
	b.WriteString(reports.TeXTableOpen(layout, caption, label))
	reports.WriteTeXTabular(&b, header, rows)
	b.WriteString(reports.TeXTableClose(layout))
	_, err := io.WriteString(w, b.String())
	return err
}

// Write writes r in format: json, markdown, latex (in layout) or the
// terminal table (any other).
func Write(w io.Writer, r *Report, format, layout string) error {
	switch format {
	case "json":
		return WriteJSON(w, r)
	case "markdown":
		return WriteMarkdown(w, r)
	case "latex":
		return WriteLaTeX(w, r, layout)
	}
	return WriteTable(w, r)
}
