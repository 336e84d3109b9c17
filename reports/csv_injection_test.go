package reports

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
)

// Method names and group-by values reach `report --format csv` from run
// directories and spec files: one a spreadsheet would evaluate as a formula
// is written with a leading "'"; numbers, negative ones included, stay
// numbers.
func TestCSVNeutralisesFormulas(t *testing.T) {
	rep := plainReport(t)
	row := rep.Tables[0].Rows[0]
	row.Label = "=cmd|' /C calc'!A0"
	rep.Tables[0].Rows[1].Label = "+SUM(1,2)"
	rep.Tables[0].Dataset = "@x"
	var want bytes.Buffer
	if err := WriteCSV(&want, plainReport(t)); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := csv.NewReader(&want).ReadAll()
	if got[1][0] != "'@x" || got[1][2] != "'=cmd|' /C calc'!A0" || got[2][2] != "'+SUM(1,2)" {
		t.Errorf("rows %q\n%q: formulas not neutralised", got[1], got[2])
	}
	for i := range got {
		if !slices.Equal(got[i][3:], plain[i][3:]) {
			t.Errorf("row %d: %q, want the values %q unchanged", i, got[i][3:], plain[i][3:])
		}
	}
	row.Cells["R@1"] = Summary{Mean: -0.5, Std: -0.25, N: 3}
	b.Reset()
	if err := WriteCSV(&b, rep); err != nil {
		t.Fatal(err)
	}
	got, _ = csv.NewReader(&b).ReadAll()
	if !slices.Contains(got[1], "-0.5") || !slices.Contains(got[1], "-0.25") {
		t.Errorf("negative numbers changed: %q", got[1])
	}
}
