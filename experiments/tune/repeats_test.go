package tune

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRanks(t *testing.T) {
	nan := 0.0
	nan = nan / nan
	for _, c := range []struct {
		best  []float64
		lower bool
		want  []int
	}{
		{[]float64{0.2, 0.5, 0.1}, false, []int{2, 1, 3}},
		{[]float64{0.2, 0.5, 0.1}, true, []int{2, 3, 1}},
		{[]float64{0.2, nan, 0.2}, false, []int{1, 3, 1}},
		{[]float64{nan, 0.3}, true, []int{2, 1}},
	} {
		if got := Ranks(c.best, c.lower); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Ranks(%v, lower %v) = %v, want %v", c.best, c.lower, got, c.want)
		}
	}
}

// search-repeats: N runs the tuning stage N times with different search
// streams; repeat 0 is the search of the spec without repeats, the others
// propose other trials, and tune.json says each method's rank per repeat.
func TestSearchRepeats(t *testing.T) {
	data := tinyData(t)
	spec := strings.Replace(tinySpec, "budget: 4", "budget: 4\nsearch-repeats: 2", 1)
	p := planOf(t, t.TempDir(), spec)
	plans := append([]*Plan{p}, p.Repeats()...)
	if len(plans) != 2 || plans[1].Out != filepath.Join(p.Out, "repeats", "r1") {
		t.Fatalf("repeat plans %v", plans)
	}
	for {
		n := 0
		for _, q := range plans {
			cells, stage, err := q.Next()
			if err != nil {
				t.Fatal(err)
			}
			if q.Repeat > 0 && stage != StageTune {
				t.Fatalf("repeat %d has a %s stage", q.Repeat, stage)
			}
			for _, c := range cells {
				dir, _ := q.CellDir(c)
				if err := RunCell(context.Background(), dir, data, CellOptions{Version: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			n += len(cells)
		}
		if n == 0 {
			break
		}
	}
	if err := p.Finish(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	sum, err := ReadSummary(p.Out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.SearchRepeats != 2 {
		t.Fatalf("search repeats %d", sum.SearchRepeats)
	}
	for _, m := range sum.Methods {
		if len(m.RepeatRanks) != 2 || len(m.RepeatBest) != 2 || m.RankHolds == nil {
			t.Fatalf("%s: ranks %v best %v holds %v", m.Name, m.RepeatRanks, m.RepeatBest, m.RankHolds)
		}
		if m.RepeatBest[0] != m.BestScore {
			t.Fatalf("%s: repeat 0's best %v is not the method's best %v", m.Name, m.RepeatBest[0], m.BestScore)
		}
	}
	if _, err := os.Stat(filepath.Join(plans[1].Out, "final")); !os.IsNotExist(err) {
		t.Fatalf("a search repeat ran a final stage: %v", err)
	}
	// Repeat 0 proposes what the spec without repeats proposes; repeat 1
	// proposes other trials.
	plain := tinyPlan(t, t.TempDir())
	if _, _, err := plain.Next(); err != nil {
		t.Fatal(err)
	}
	c0, _ := ReadCell(p.TrialDir(0, 0, 0))
	cp, _ := ReadCell(plain.TrialDir(0, 0, 0))
	c1, _ := ReadCell(plans[1].TrialDir(0, 0, 0))
	if !reflect.DeepEqual(c0.Params, cp.Params) || reflect.DeepEqual(c0.Params, c1.Params) {
		t.Fatalf("trial 0: repeat 0 %v, plain %v, repeat 1 %v", c0.Params, cp.Params, c1.Params)
	}
	if p.TotalCells() != p.NumCells()+p.tuneCells() {
		t.Fatalf("total cells %d", p.TotalCells())
	}
}
