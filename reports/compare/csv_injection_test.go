package compare

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/metrics"
)

// Labels are the user's text: in the per-query CSV one a spreadsheet
// would evaluate gets a leading "'"; numeric labels and values (negative
// ones too) are written as they are. JSON lines keep the label exact.
func TestValuesCSVNeutralisesFormulas(t *testing.T) {
	v := &metrics.QueryValues{
		Keys:   []string{"R@1", "MAP@R"},
		Index:  []int{0, 1, 2, 3, 4},
		Labels: []string{"=cmd|' /C calc'!A0", "+SUM(1,2)", "@x", "-1", "cat"},
		Values: [][]float64{{1, 0, 1, 0, 1}, {0.5, -0.5, math.NaN(), 1e-05, 0.25}},
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, v); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"index", "label", "R@1", "MAP@R"},
		{"0", "'=cmd|' /C calc'!A0", "1", "0.5"},
		{"1", "'+SUM(1,2)", "0", "-0.5"},
		{"2", "'@x", "1", ""},
		{"3", "-1", "0", "1e-05"},
		{"4", "cat", "1", "0.25"},
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
	b.Reset()
	if err := WriteJSONL(&b, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte(`{"index":0,"label":"=cmd|' /C calc'!A0"`)) {
		t.Errorf("JSON lines changed the label: %s", b.Bytes())
	}
}
