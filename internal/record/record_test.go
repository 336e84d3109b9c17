package record

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteAtomic leaves exactly the target, readable by all, and replaces an
// earlier file whole.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.json")
	for _, status := range []string{"running", "done"} {
		if err := WriteAtomic(p, &Run{Schema: SchemaVersion, Status: status}); err != nil {
			t.Fatal(err)
		}
		r, err := Read(p)
		if err != nil || r.Status != status {
			t.Fatalf("read back %+v %v", r, err)
		}
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %d files", len(ents))
	}
}

// NaN and ±Inf metrics are null in JSON, and null reads back as NaN.
func TestMetricsJSONNaN(t *testing.T) {
	r := Run{Schema: 1, Final: Metrics{"R@1": 0.5, "MAP@R": math.NaN(), "rho": math.Inf(1)}}
	b, err := MarshalJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"MAP@R": null`) || !strings.Contains(string(b), `"rho": "+Inf"`) {
		t.Fatalf("NaN not written as null or +Inf not as \"+Inf\":\n%s", b)
	}
	p := filepath.Join(t.TempDir(), "run.json")
	if err := WriteAtomic(p, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if back.Final["R@1"] != 0.5 || !math.IsNaN(back.Final["MAP@R"]) || !math.IsInf(back.Final["rho"], 1) {
		t.Fatalf("read back %v; want R@1 0.5, NaN for the null and +Inf for ρ", back.Final)
	}
	var bad Metrics
	if err := bad.UnmarshalJSON([]byte(`{"rho": "big"}`)); err == nil {
		t.Fatal("a string other than \"+Inf\"/\"-Inf\" was accepted")
	}
}

// A loss that is unknown or not finite is null in run.json (JSON has no
// NaN), and null reads back as NaN, never 0.
func TestEpochLossJSON(t *testing.T) {
	r := Run{Schema: 1, History: []Epoch{{Epoch: 1, Loss: 0.25}, {Epoch: 2, Loss: math.NaN()}, {Epoch: 3, Loss: math.Inf(1)}}}
	b, err := MarshalJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), `"loss": null`) != 2 || !strings.Contains(string(b), `"loss": 0.25`) {
		t.Fatalf("losses written as\n%s", b)
	}
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.History[0].Loss != 0.25 || !math.IsNaN(back.History[1].Loss) || !math.IsNaN(back.History[2].Loss) {
		t.Fatalf("read back %+v", back.History)
	}
}
