package tune

import (
	"strings"
	"testing"
)

// Method names are directories: two that differ only in case would share
// one on macOS or Windows, so they are refused like a repeated name.
func TestMethodNamesDifferingInCaseRefused(t *testing.T) {
	twin := strings.Replace(okSpec[strings.Index(okSpec, "  - name: margin"):], "name: margin", "name: Margin", 1)
	_, err := Parse([]byte(okSpec+twin), Options{})
	want := "methods margin and Margin differ only in case"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
	same := okSpec[strings.Index(okSpec, "  - name: margin"):]
	if _, err := Parse([]byte(okSpec+same), Options{}); err == nil || !strings.Contains(err.Error(), "method margin given twice") {
		t.Fatalf("repeated name: %v", err)
	}
	other := strings.Replace(same, "name: margin", "name: margin2", 1)
	if _, err := Parse([]byte(okSpec+other), Options{}); err != nil {
		t.Fatalf("distinct names: %v", err)
	}
}
