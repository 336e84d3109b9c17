package csvsafe

import (
	"encoding/csv"
	"io"
	"regexp"
)

// decimal is a number as strconv.FormatFloat / FormatInt write it, with an
// optional sign: a spreadsheet reads it as a number.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Cell is s as a CSV cell a spreadsheet will not evaluate: s with a
// leading "'" when it starts with = + - @, a tab or a carriage return and
// is not a decimal number; s itself otherwise.
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if !decimal.MatchString(s) {
			return "'" + s
		}
	}
	return s
}

// Writer is a csv.Writer whose records pass through Cell.
type Writer struct {
	*csv.Writer
	rec []string
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{Writer: csv.NewWriter(w)} }

// Write writes one record, each field through Cell; rec is not modified.
func (w *Writer) Write(rec []string) error {
	w.rec = w.rec[:0]
	for _, f := range rec {
		w.rec = append(w.rec, Cell(f))
	}
	return w.Writer.Write(w.rec)
}
