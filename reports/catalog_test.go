package reports

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// Words wrap at spaces; a word longer than the width is cut.
func TestWrapWords(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"one two three", 7, []string{"one two", "three"}},
		{"abcdefghij x", 4, []string{"abcd", "efgh", "ij x"}},
		{"no width", 0, []string{"no width"}},
	} {
		if got := wrapWords(c.s, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

// Natural widths when they fit; else the first column whole, the others
// at least their longest word, the rest shared by what each lacks.
func TestFitColumns(t *testing.T) {
	if got := fitColumns([]int{5, 10}, []int{5, 4}, 80); !reflect.DeepEqual(got, []int{5, 10}) {
		t.Errorf("fits: %v", got)
	}
	// 10 + 2 + 8 + 2 + 8 = 30 at the minimum; 40 leaves 10, shared 42:52
	// (rounded down: 4 and 5).
	got := fitColumns([]int{10, 50, 60}, []int{10, 5, 8}, 40)
	if want := []int{10, 12, 13}; !reflect.DeepEqual(got, want) {
		t.Errorf("squeezed: %v, want %v", got, want)
	}
}

// The wrapped table keeps every word within the width; JSON keys are the
// lower-cased headers without their parenthesis.
func TestWriteCatalog(t *testing.T) {
	rows := [][]string{{"NAME", "DEFINITION (strict)"}, {"a", strings.Repeat("word ", 20)}}
	var b bytes.Buffer
	if err := WriteCatalog(&b, rows, "table", false, 30); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if len(l) > 30 {
			t.Errorf("line %q is wider than 30", l)
		}
	}
	b.Reset()
	if err := WriteCatalog(&b, rows, "json", false, 30); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"definition": "word word`) || !strings.Contains(b.String(), `"name": "a"`) {
		t.Errorf("json: %s", b.String())
	}
	if _, ok := Catalog("gizmos"); ok {
		t.Error("an unknown kind was listed")
	}
	for _, k := range CatalogKinds {
		if rows, ok := Catalog(k); !ok || len(rows) < 2 {
			t.Errorf("%s: %d rows", k, len(rows))
		}
	}
}

// Options.Check refuses a bad source, level or resample count.
func TestOptionsCheck(t *testing.T) {
	ok := Options{Source: "final", Alpha: 0.05, Bootstrap: 1}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Options{
		{Source: "last", Alpha: 0.05, Bootstrap: 1}, {Source: "best", Alpha: 1, Bootstrap: 1},
		{Source: "initial", Alpha: 0.05, CI: 1.5, Bootstrap: 1}, {Source: "final", Alpha: 0.05},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
