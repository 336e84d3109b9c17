package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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

// rows are the table rows: metric, A, B, B − A, interval, p.
func (r *Report) rows() (header []string, rows [][]string) {
	header = []string{"metric", "A", "B", "B − A", fmt.Sprintf("%g %% CI", 100*r.Level), "p"}
	for _, t := range r.Tests {
		ci, p := "not tested", "–"
		if t.Testable {
			ci = "[" + cell(t.Key, t.Lo, true) + ", " + cell(t.Key, t.Hi, true) + "]"
			p = reports.FormatP(t.P)
		}
		rows = append(rows, []string{t.Key, cell(t.Key, t.A, false), cell(t.Key, t.B, false), cell(t.Key, t.Diff, true), ci, p})
	}
	return header, rows
}

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
	header, rows := r.rows()
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
	header, rows := r.rows()
	esc := strings.NewReplacer("|", `\|`)
	fmt.Fprintf(w, "| %s |\n| :--- |%s\n", strings.Join(header, " | "), strings.Repeat(" ---: |", len(header)-1))
	for _, row := range rows {
		for i := range row {
			row[i] = esc.Replace(row[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(w)
	for _, l := range r.Footer() {
		fmt.Fprintf(w, "%s.  \n", esc.Replace(l))
	}
	return nil
}

// WriteLaTeX writes a booktabs tabular (\usepackage{booktabs}) with the
// footer lines as comments.
func WriteLaTeX(w io.Writer, r *Report) error {
	header, rows := r.rows()
	esc := strings.NewReplacer(`\`, `\textbackslash{}`, "_", `\_`, "%", `\%`, "&", `\&`, "#", `\#`, "$", `\$`, "{", `\{`, "}", `\}`, "−", "$-$")
	for _, l := range r.Footer() {
		fmt.Fprintf(w, "%% %s\n", l)
	}
	fmt.Fprintf(w, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", len(header)-1))
	for i := range header {
		header[i] = esc.Replace(header[i])
	}
	fmt.Fprintf(w, "%s \\\\\n\\midrule\n", strings.Join(header, " & "))
	for _, row := range rows {
		for i := range row {
			row[i] = esc.Replace(strings.ReplaceAll(row[i], "–", "--"))
		}
		fmt.Fprintf(w, "%s \\\\\n", strings.Join(row, " & "))
	}
	fmt.Fprint(w, "\\bottomrule\n\\end{tabular}\n")
	return nil
}
