package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Every query alone in its class: MAP@R has no counted query, and the
// table, its footer and the JSON say why in those words, not as if the
// metric had no per-query values.
func TestAllLoneMAPRSaysWhy(t *testing.T) {
	a := mat32.Matrix{Rows: 4, Cols: 2, Data: []float32{0, 0, 1, 0, 0, 1, 1, 1}}
	b := mat32.Matrix{Rows: 4, Cols: 2, Data: []float32{0, 0, 2, 0, 0, 1, 3, 1}}
	y := []int32{0, 1, 2, 3}
	ra, rb := evalPQ(t, a, y), evalPQ(t, b, y)
	tests, err := Compare(ra, rb, append(keys, "NMI"), Options{Resamples: 99, Seed: 1, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	const lone = "no query has a relevant item"
	if m := tests[1]; m.Key != "MAP@R" || m.Testable || !strings.HasPrefix(m.Why, lone) {
		t.Fatalf("MAP@R: %+v", m)
	}
	rep := &Report{A: "a", B: "b", Queries: 4, Classes: 4, Resamples: 99, Level: 0.95, Tests: tests}
	var tab bytes.Buffer
	if err := WriteTable(&tab, rep); err != nil {
		t.Fatal(err)
	}
	out := tab.String()
	if !strings.Contains(out, "not tested ("+lone+": every query is alone in its class): MAP@R\n") {
		t.Errorf("footer:\n%s", out)
	}
	if !strings.Contains(out, "not tested (no per-query values: one value for the whole set): NMI\n") ||
		strings.Contains(out, "whole set): MAP@R") || strings.Contains(out, "whole set): R@1") {
		t.Errorf("footer mixes the reasons:\n%s", out)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metrics map[string]struct {
			Why string `json:"not_testable"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || !strings.HasPrefix(got.Metrics["MAP@R"].Why, lone) {
		t.Errorf("JSON: %v %s", err, js.Bytes())
	}
}
