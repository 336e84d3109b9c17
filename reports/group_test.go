package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// loadMixed reads testdata/mixed: margin runs that differ in arch and
// epochs besides the seed, one R@1 null and one NMI missing.
func loadMixed(t *testing.T) []LoadedRun {
	t.Helper()
	l, err := LoadRuns([]string{"testdata/mixed"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Runs
}

// TestGroupSplitsExperiments: --group-by loss must not pool runs that
// differ in arch (a Method key) or epochs (a config key) besides the seed:
// the margin group splits into one row per (arch, epochs), named in the
// label, with a note. The golden file pins the rendered table.
func TestGroupSplitsExperiments(t *testing.T) {
	rep, err := Aggregate(loadMixed(t), Options{GroupBy: []string{"loss"}, Metrics: []string{"R@1", "NMI"}})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range rep.Tables[0].Rows {
		labels = append(labels, r.Label)
	}
	want := "margin [arch=cnn epochs=20]|margin [arch=mlp epochs=20]|margin [arch=mlp epochs=3]|triplet"
	if got := strings.Join(labels, "|"); got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "margin: runs differ in arch, epochs besides the seed") {
		t.Errorf("no note naming the split keys: %q", rep.Notes)
	}
	var b bytes.Buffer
	if err := Write(&b, rep, "markdown", FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "mixed_markdown", b.Bytes())
	// Grouping by the differing keys too gives the same rows, plainly named.
	rep, err = Aggregate(loadMixed(t), Options{GroupBy: []string{"loss", "arch", "epochs"}, Metrics: []string{"R@1"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Tables[0].Rows); n != 4 || rep.Tables[0].Rows[0].Label != "margin/cnn/20" {
		t.Errorf("%d rows, first %q", n, rep.Tables[0].Rows[0].Label)
	}
}

// TestNullMetricLeftOut: a null metric in run.json is no 0 in the mean:
// margin mlp 20 epochs has R@1 30, null, 28 → mean 29 over n = 2 of 3 runs,
// shown "(n = 2/3)"; a missing NMI likewise.
func TestNullMetricLeftOut(t *testing.T) {
	rep, err := Aggregate(loadMixed(t), Options{GroupBy: []string{"loss", "arch", "epochs"}, Metrics: []string{"R@1", "NMI"}})
	if err != nil {
		t.Fatal(err)
	}
	var row *Row
	for _, r := range rep.Tables[0].Rows {
		if r.Label == "margin/mlp/20" {
			row = r
		}
	}
	if row == nil {
		t.Fatal("no margin/mlp/20 row")
	}
	if c := row.Cells["R@1"]; row.N != 3 || c.N != 2 || math.Abs(c.Mean-29) > 1e-9 {
		t.Errorf("R@1: row n %d, cell n %d, mean %v; want 3, 2, 29", row.N, c.N, c.Mean)
	}
	if c := row.Cells["NMI"]; c.N != 2 || math.Abs(c.Mean-51) > 1e-9 {
		t.Errorf("NMI: cell n %d, mean %v; want 2, 51", c.N, c.Mean)
	}
	var b bytes.Buffer
	if err := Write(&b, rep, "markdown", FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "29.00 ± 1.41 (n = 2/3)") {
		t.Errorf("no (n = 2/3) cell:\n%s", b.String())
	}
}

// TestGroupByUnknownKey: a group-by key no run has is an error listing the
// keys the runs have (config keys included), not one pooled row.
func TestGroupByUnknownKey(t *testing.T) {
	_, err := Aggregate(loadMixed(t), Options{GroupBy: []string{"loss", "nope"}})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "arch, dataset, epochs, loss, sampler") {
		t.Fatalf("err = %v", err)
	}
	// embed_dim and embed-dim name the same key.
	if _, err := Aggregate(loadTestRuns(t), Options{GroupBy: []string{"loss", "embed-dim"}}); err != nil {
		t.Fatal(err)
	}
}
