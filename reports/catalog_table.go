package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// catalogLong prints one aligned line per entry, however wide.
func catalogLong(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// catalogJSON prints the entries as an array of objects keyed by the
// lower-cased header ("metric", "definition (strict)" becomes "definition").
func catalogJSON(w io.Writer, rows [][]string) error {
	keys := make([]string, len(rows[0]))
	for i, h := range rows[0] {
		h = strings.ToLower(h)
		if j := strings.Index(h, " ("); j > 0 {
			h = h[:j]
		}
		keys[i] = strings.ReplaceAll(h, " ", "_")
	}
	out := make([]map[string]string, 0, len(rows)-1)
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, k := range keys {
			if i < len(r) {
				m[k] = r[i]
			}
		}
		out = append(out, m)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

const catalogGap = 2 // spaces between columns

// catalogWrapped prints rows as a table at most width columns wide (see
// fitColumns); cells wrap at word boundaries.
func catalogWrapped(w io.Writer, rows [][]string, width int) error {
	ncol := 0
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	natural, longest := make([]int, ncol), make([]int, ncol)
	for _, r := range rows {
		for i, c := range r {
			natural[i] = max(natural[i], utf8.RuneCountInString(c))
			for _, w := range strings.Fields(c) {
				longest[i] = max(longest[i], utf8.RuneCountInString(w))
			}
		}
	}
	widths := fitColumns(natural, longest, width)
	var b strings.Builder
	for _, r := range rows {
		cells := make([][]string, ncol)
		lines := 1
		for i := range cells {
			text := ""
			if i < len(r) {
				text = r[i]
			}
			cells[i] = wrapWords(text, widths[i])
			lines = max(lines, len(cells[i]))
		}
		for l := 0; l < lines; l++ {
			var line strings.Builder
			for i := range cells {
				part := ""
				if l < len(cells[i]) {
					part = cells[i][l]
				}
				line.WriteString(part)
				if i < ncol-1 {
					line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(part)+catalogGap))
				}
			}
			b.WriteString(strings.TrimRight(line.String(), " "))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fitColumns returns column widths summing (with gaps) to at most width
// when possible: natural widths if they fit; else the first column whole,
// every other column at least its longest word (so no word is cut) and
// the space left shared in proportion to what each column still lacks.
func fitColumns(natural, longestWord []int, width int) []int {
	widths := append([]int(nil), natural...)
	total := catalogGap * (len(widths) - 1)
	for _, n := range natural {
		total += n
	}
	if total <= width || len(widths) < 2 {
		return widths
	}
	left := width - widths[0] - catalogGap*(len(widths)-1)
	lack := 0
	for i := 1; i < len(widths); i++ {
		widths[i] = min(natural[i], max(longestWord[i], 8))
		left -= widths[i]
		lack += natural[i] - widths[i]
	}
	if left <= 0 || lack == 0 {
		return widths
	}
	for i := 1; i < len(widths); i++ {
		widths[i] += left * (natural[i] - widths[i]) / lack
	}
	return widths
}

// wrapWords breaks s into lines of at most width runes at spaces; a word
// longer than width is cut.
func wrapWords(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur []rune
	for _, word := range strings.Fields(s) {
		wr := []rune(word)
		for len(wr) > width {
			if len(cur) > 0 {
				lines = append(lines, string(cur))
				cur = nil
			}
			lines = append(lines, string(wr[:width]))
			wr = wr[width:]
		}
		switch {
		case len(cur) == 0:
			cur = wr
		case len(cur)+1+len(wr) <= width:
			cur = append(append(cur, ' '), wr...)
		default:
			lines = append(lines, string(cur))
			cur = wr
		}
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}
