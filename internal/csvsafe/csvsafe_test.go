package csvsafe

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
)

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"=cmd|' /C calc'!A0":     "'=cmd|' /C calc'!A0",
		"+SUM(1,2)":              "'+SUM(1,2)",
		"-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0",
		"@x":                     "'@x",
		"\t=1":                   "'\t=1",
		"\r=1":                   "'\r=1",
		"-":                      "'-",
		"+":                      "'+",
		"-Inf":                   "'-Inf",
		"-1e-05x":                "'-1e-05x",
		// numbers stay numbers
		"-0.5": "-0.5", "+3": "+3", "-1e-05": "-1e-05", "-7": "-7", "-.5": "-.5", "1E+10": "1E+10", "-3.": "-3.",
		// other text is left alone
		"": "", "cat": "cat", "a=b": "a=b", " =x": " =x", "'=x": "'=x", "0.5": "0.5",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

// The written file reads back, through any CSV reader, as the neutralised
// cells; the caller's record is not changed.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	rec := []string{"=1+1", "-0.5", "x,\"y\"", "@SUM(A1)"}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	got, err := csv.NewReader(&b).Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"'=1+1", "-0.5", "x,\"y\"", "'@SUM(A1)"}; !slices.Equal(got, want) {
		t.Errorf("read back %q, want %q", got, want)
	}
	if rec[0] != "=1+1" {
		t.Errorf("caller's record changed: %q", rec)
	}
}
