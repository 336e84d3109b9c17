package tune

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/reports"
)

// The final table of a tune directory: a row per method with a
// successful trial, and notes saying which method has no row and, with
// search repeats, whether each rank holds.
func TestTableNotes(t *testing.T) {
	dir := t.TempDir()
	yes, no := true, false
	sum := Summary{Dataset: "synthetic", Search: "tpe", Objective: "MAP@R", Budget: 4, Folds: 2, Seeds: []int64{0}, SearchRepeats: 2, Join: JoinL2,
		Methods: []MethodSummary{
			{Name: "margin", Loss: "margin", Best: 1, BestScore: 0.3, BestParams: map[string]string{"lr": "0.001"}, RepeatRanks: []int{1, 1}, RankHolds: &yes},
			{Name: "npair", Loss: "npair", Best: -1, BestScore: Value(math.NaN()), RepeatRanks: []int{2, 2}, RankHolds: &yes},
			{Name: "triplet", Loss: "triplet", Best: 0, BestScore: 0.2, RepeatRanks: []int{3, 1}, RankHolds: &no},
		}}
	write := func() {
		b, _ := json.Marshal(sum)
		if err := os.WriteFile(filepath.Join(dir, SummaryFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	if _, err := ReadFinished(dir); err == nil || !strings.Contains(err.Error(), "has not finished its final stage") {
		t.Fatalf("an unfinished tune: %v", err)
	}
	sum.Done = true
	write()
	got, err := ReadFinished(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Table(got, dir, reports.Options{Source: "final", Alpha: 0.05, Bootstrap: 1}, false, true); err == nil {
		t.Error("a table without results")
	}
	for _, m := range []string{"margin", "triplet"} {
		rd := filepath.Join(ResultsDir(dir), m, Separated, "s0")
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		run := `{"schema": 1, "dataset": "synthetic", "method": {"method": "` + m + `", "embedding": "separated"}, "seed": 0, "status": "done", "final": {"R@1": 0.5}}`
		if err := os.WriteFile(filepath.Join(rd, "run.json"), []byte(run), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, _, err := Table(got, dir, reports.Options{Source: "final", Metrics: []string{"R@1"}, Alpha: 0.05, Bootstrap: 1}, false, true)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"npair: no row: none of its 4 tpe trials trained successfully",
		"margin: best of 4 tpe trials t001, validation MAP@R 30.00% (mean over 2 folds of the training classes); chosen lr=0.001",
		"rank by best validation MAP@R in each of 2 searches with different search seeds: margin 1, 1 (holds); npair 2, 2 (holds); triplet 3, 1 (does not hold)",
		"separated: mean over the 2 fold models; concatenated: their test embeddings, each L2-normalised, side by side (2·d dimensions); seeds [0]"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
