package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
)

func init() {
	register(&cli.Command{
		Name:        "list",
		Usage:       "list metrics, losses, miners, samplers, regularizers, archs, backends or datasets",
		UsageText:   "dmlbench list metrics|losses|miners|samplers|regularizers|archs|backends|datasets [--long] [--format json]",
		Description: helpText("list"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "one line per entry, no wrapping"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table | json"},
		},
		Action: func(c *cli.Context) error {
			args, err := reportArgs(c) // flags may follow the kind
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return usagef("list what? metrics, losses, miners, samplers, regularizers, archs, backends or datasets")
			}
			if len(args) > 1 {
				return usagef("list takes one kind (got %q)", strings.Join(args, " "))
			}
			kind := args[0]
			format := c.String("format")
			if format != "table" && format != "json" {
				return usagef("--format must be table or json (got %q)", format)
			}
			rows, err := listRows(kind)
			if err != nil {
				return err
			}
			switch {
			case format == "json":
				return listJSON(c.App.Writer, rows)
			case c.Bool("long"):
				return listLong(c.App.Writer, rows)
			}
			return listWrapped(c.App.Writer, rows, listWidth(c.App.Writer))
		},
	})
}

// listExtensions are provided by other command files (trainer methods,
// datasets): for their kind they write a header line and one line per
// entry, columns separated by tabs, and return true.
var listExtensions []func(kind string, w io.Writer) (bool, error)

// listRows returns the header and entries of one list kind.
func listRows(kind string) ([][]string, error) {
	var buf bytes.Buffer
	switch kind {
	case "metrics":
		fmt.Fprintln(&buf, "METRIC\tDEFINITION (strict)\tSOURCE")
		for _, m := range metrics.All() {
			fmt.Fprintf(&buf, "%s\t%s\t%s\n", m.Key, m.Definition, m.Source)
		}
	case "backends":
		fmt.Fprintln(&buf, "BACKEND\tIN THIS BINARY\tSUMMARY")
		for _, b := range knn.Backends.Entries() {
			if b.Available {
				fmt.Fprintf(&buf, "%s\tyes\t%s\n", b.Name, b.Value.Summary)
			} else {
				fmt.Fprintf(&buf, "%s\tno\t%s (%s)\n", b.Name, b.Summary, b.HowToGet)
			}
		}
	default:
		found := false
		for _, ext := range listExtensions {
			ok, err := ext(kind, &buf)
			if err != nil {
				return nil, err
			}
			if ok {
				found = true
				break
			}
		}
		if !found {
			return nil, usagef("unknown list %q (metrics, losses, miners, samplers, regularizers, archs, backends, datasets)", kind)
		}
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows, nil
}

// listWidth is the terminal's width, or 80 when w is not a terminal.
func listWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// listLong prints one aligned line per entry, however wide.
func listLong(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// listJSON prints the entries as an array of objects keyed by the
// lower-cased header ("metric", "definition (strict)" becomes "definition").
func listJSON(w io.Writer, rows [][]string) error {
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

const listGap = 2 // spaces between columns

// listWrapped prints rows as a table at most width columns wide (see
// fitColumns); cells wrap at word boundaries.
func listWrapped(w io.Writer, rows [][]string, width int) error {
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
					line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(part)+listGap))
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
	total := listGap * (len(widths) - 1)
	for _, n := range natural {
		total += n
	}
	if total <= width || len(widths) < 2 {
		return widths
	}
	left := width - widths[0] - listGap*(len(widths)-1)
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
