package reports

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/dmlbench/dmlbench/internal/csvsafe"
)

// NewTextTable is the box-drawn table (olekukonko/tablewriter v1) of every
// terminal output: header as given and centred, the first column
// left-aligned and the others right-aligned (numbers), no wrapping.
func NewTextTable(w io.Writer, header []string) *tablewriter.Table {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	tbl := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoFormat(tw.Off),
		tablewriter.WithEastAsian(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	hdr := make([]any, len(header))
	for i, x := range header {
		hdr[i] = x
	}
	tbl.Header(hdr...)
	return tbl
}

// WriteTerminal renders box-drawn tables with olekukonko/tablewriter (v1
// API). Best values are ANSI bold with color, else marked " *".
func WriteTerminal(w io.Writer, rep *Report, color bool) error {
	for ti, t := range rep.Tables {
		if ti > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "%s\n", t.Dataset); err != nil {
			return err
		}
		tbl := NewTextTable(w, t.header(symDelta))
		for i, r := range t.Rows {
			label := r.Label
			if i == t.BaselineRow {
				label += " (baseline)"
			}
			cells := []string{label, strconv.Itoa(r.N)}
			for _, m := range t.Metrics {
				c := measuredCell(t, r, m, rep.Opt, symPM)
				s := c.main
				if c.best {
					if color {
						s = "\x1b[1m" + s + "\x1b[0m"
					} else {
						s += " *"
					}
				}
				if c.near {
					s += " ≈"
				}
				cells = append(cells, s+c.extra)
				if t.BaselineRow >= 0 {
					cells = append(cells, deltaCell(t, i, m, rep.Opt, symDagger))
				}
			}
			if err := tbl.Append(cells); err != nil {
				return fmt.Errorf("reports: terminal table: %w", err)
			}
		}
		for _, ref := range t.References {
			cells := []string{ref.Approach + " [published]", symDash}
			for _, m := range t.Metrics {
				cells = append(cells, refCell(t, ref, m, rep.Opt, symPM))
				if t.BaselineRow >= 0 {
					cells = append(cells, "")
				}
			}
			if err := tbl.Append(cells); err != nil {
				return fmt.Errorf("reports: terminal table: %w", err)
			}
		}
		if err := tbl.Render(); err != nil {
			return fmt.Errorf("reports: terminal table: %w", err)
		}
		legend := Legend(rep, t)
		if !color {
			legend = strings.Replace(legend, "best mean per column in bold", "best mean per column marked *", 1)
		}
		legend = strings.Replace(legend, nearBestWord+":", "≈:", 1)
		if _, err := fmt.Fprintln(w, legend); err != nil {
			return err
		}
	}
	for _, n := range rep.Notes {
		if _, err := fmt.Fprintln(w, "note:", n); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes one line per row (measured and published) with full
// precision numbers: dataset, kind (measured|published), method, the
// group-by fields, n, source, then per metric mean, std, n, and
// ci_lo/ci_hi with CIs and delta, t, df, p, p adjusted (Options.Correction),
// significant with a baseline.
// Missing values are empty; a name a spreadsheet would run as a formula
// gets a leading "'" (internal/csvsafe, docs/output.md).
func WriteCSV(w io.Writer, rep *Report) error {
	cw := csvsafe.NewWriter(w)
	groupBy := rep.Opt.GroupBy
	metrics := rep.Opt.Metrics
	hasCI := rep.Opt.CI > 0
	hasBase := rep.Opt.Baseline != ""
	h := []string{"dataset", "kind", "method"}
	h = append(h, groupBy...)
	h = append(h, "n", "source")
	for _, m := range metrics {
		h = append(h, m+" mean", m+" std", m+" n")
		if hasCI {
			h = append(h, m+" ci_lo", m+" ci_hi")
		}
		if hasBase {
			h = append(h, m+" delta", m+" t", m+" df", m+" p", m+" p adjusted", m+" significant")
			if hasCI {
				h = append(h, m+" delta_ci_lo", m+" delta_ci_hi")
			}
		}
	}
	if err := cw.Write(h); err != nil {
		return err
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, t := range rep.Tables {
		for i, r := range t.Rows {
			rec := []string{t.Dataset, "measured", r.Label}
			for _, k := range groupBy {
				rec = append(rec, r.Method[k])
			}
			src := ""
			if i == t.BaselineRow {
				src = "baseline"
			}
			rec = append(rec, strconv.Itoa(r.N), src)
			for _, m := range metrics {
				s := r.Cells[m]
				rec = append(rec, num(s.Mean), num(s.Std), strconv.Itoa(s.N))
				if hasCI {
					rec = append(rec, num(s.CILo), num(s.CIHi))
				}
				if hasBase {
					c := r.Delta[m]
					if c == nil {
						rec = append(rec, "", "", "", "", "", "")
						if hasCI {
							rec = append(rec, "", "")
						}
						continue
					}
					sig := ""
					if c.Err == "" {
						sig = strconv.FormatBool(c.Significant)
					}
					pAdj := ""
					if c.Err == "" {
						pAdj = num(c.PAdj)
					}
					rec = append(rec, num(c.Delta), num(c.T), num(c.DF), num(c.P), pAdj, sig)
					if hasCI {
						rec = append(rec, num(c.CILo), num(c.CIHi))
					}
				}
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		for _, ref := range t.References {
			rec := []string{t.Dataset, "published", ref.Approach}
			for range groupBy {
				rec = append(rec, "")
			}
			rec = append(rec, "", ref.Citation()+" ("+ref.Dataset+")")
			for _, m := range metrics {
				v, ok := ref.Metrics[m]
				if !ok {
					v = RefValue{Mean: math.NaN(), Std: math.NaN()}
				}
				if rep.Opt.Raw && IsPercentMetric(m) {
					v.Mean /= 100
					v.Std /= 100
				}
				rec = append(rec, num(v.Mean), num(v.Std), "")
				if hasCI {
					rec = append(rec, "", "")
				}
				if hasBase {
					rec = append(rec, "", "", "", "", "")
					if hasCI {
						rec = append(rec, "", "")
					}
				}
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
