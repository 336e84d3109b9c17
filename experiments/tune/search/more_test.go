package search

import (
	"math"
	"strings"
	"testing"
)

// The first point of a batch does not depend on the batch's size: a
// budget that grows from 3 to 6 (batches [0 1] [2] → [0 1] [2 3]) proposes
// trial 2 as before, which is what lets tune extend a search.
func TestFirstOfBatchIndependentOfBatchSize(t *testing.T) {
	space := Space{{Name: "x", Low: 0, High: 1}, {Name: "lr", Low: 1e-4, High: 1e-1, Log: true}, {Name: "c", Values: []string{"a", "b", "c"}}}
	hist := []Observation{{Point: Point{0.2, 1e-3, 0}, Score: 0.5}, {Point: Point{0.8, 1e-2, 2}, Score: 0.1}, {Point: Point{0.4, 5e-3, 1}, Score: math.NaN()}}
	for _, p := range []Proposer{TPE{Seed: 3, Startup: 1}, Random{Seed: 3}} {
		one := p.Propose(space, hist, 3, 1)
		two := p.Propose(space, hist, 3, 2)
		for i := range one[0] {
			if one[0][i] != two[0][i] {
				t.Fatalf("%T: trial 3 alone %v, in a batch of two %v", p, one[0], two[0])
			}
		}
	}
}

// A lone failed (NaN) observation counts as the worst, never as good.
func TestSplitPutsNaNLast(t *testing.T) {
	hist := []Observation{{Point: Point{1}, Score: math.NaN()}, {Point: Point{2}, Score: 0.3}, {Point: Point{3}, Score: 0.9}, {Point: Point{4}, Score: 0.1}}
	good, bad := TPE{Gamma: 0.25}.split(hist)
	if len(good) != 1 || good[0][0] != 3 || bad[len(bad)-1][0] != 1 {
		t.Fatalf("good %v bad %v", good, bad)
	}
}

// Format writes categorical values, integers and the shortest float.
func TestFormatAndSpaceValidate(t *testing.T) {
	c := Param{Name: "c", Values: []string{"a", "b"}}
	if c.Format(1) != "b" || c.Format(5) != "?" {
		t.Fatal("categorical format")
	}
	if (Param{Name: "n", Low: 1, High: 9, Int: true}).Format(4) != "4" || (Param{Name: "x", Low: 0, High: 1}).Format(0.1) != "0.1" {
		t.Fatal("numeric format")
	}
	for _, c := range []struct {
		s    Space
		want string
	}{
		{Space{}, "empty search space"},
		{Space{{Low: 0, High: 1}}, "has no name"},
		{Space{{Name: "a", Low: 0, High: 1}, {Name: "a", Low: 0, High: 2}}, "given twice"},
		{Space{{Name: "a", Low: 1, High: 0}}, "low 1 > high 0"},
	} {
		if err := c.s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.s, err, c.want)
		}
	}
}
