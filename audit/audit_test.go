package audit

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/mat32"
)

func split(r *rand.Rand, n, d int, classes []string) fixtures.Split {
	s := fixtures.Split{X: mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}, Labels: make([]int32, n), ClassNames: classes}
	for i := range s.X.Data {
		s.X.Data[i] = float32(r.NormFloat64())
	}
	for i := range s.Labels {
		s.Labels[i] = int32(i % len(classes))
	}
	return s
}

// Planted leaks are found, and nothing else: 3 test rows copied from
// training rows, 2 perturbed by 1 % of their norm, one class name in both
// splits; the rest of the rows are independent Gaussians (relative
// distance near √2).
func TestPlantedDuplicates(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 4))
	const d = 16
	train := split(r, 300, d, []string{"a", "b", "c", "shared"})
	test := split(r, 200, d, []string{"x", "y", "shared"})
	for _, p := range [][2]int{{5, 17}, {50, 230}, {199, 0}} {
		copy(test.X.Row(p[0]), train.X.Row(p[1]))
	}
	for _, p := range [][2]int{{7, 100}, {8, 101}} {
		row := test.X.Row(p[0])
		copy(row, train.X.Row(p[1]))
		row[0] += 0.01 * float32(norm(row))
	}
	rep, err := Run(context.Background(), "planted", train, test, DefaultNear, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Exact) != 3 || rep.Exact[0].Test != 5 || rep.Exact[0].Train != 17 || rep.Exact[2].Test != 199 || rep.Exact[2].Train != 0 {
		t.Errorf("exact %+v", rep.Exact)
	}
	if len(rep.Close) != 2 || rep.Close[0].Rel > 0.011 || rep.Close[0].Rel < 0.009 {
		t.Errorf("close %+v", rep.Close)
	}
	if len(rep.Shared) != 1 || rep.Shared[0] != "shared" {
		t.Errorf("shared %v", rep.Shared)
	}
	if rep.MedianRel < 0.5 {
		t.Errorf("median relative distance %v: independent rows should be far apart", rep.MedianRel)
	}
	var b bytes.Buffer
	rep.Write(&b, 2)
	out := b.String()
	for _, want := range []string{"LEAK classes in both splits: 1 (shared)", "equal to a training row (bit for bit): 3", "… 1 more", "within 0.05 of a training row", ": 2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 20 {
		t.Errorf("report is %d lines, want one screen", n)
	}
	// A clean split: nothing reported.
	clean, err := Run(context.Background(), "clean", split(r, 100, d, []string{"a"}), split(r, 80, d, []string{"b"}), DefaultNear, 1)
	if err != nil || clean.Leaks() {
		t.Errorf("clean split: %v %+v", err, clean)
	}
	if _, err := Run(context.Background(), "no train", fixtures.Split{X: mat32.Matrix{Cols: d}}, test, DefaultNear, 1); err == nil {
		t.Error("an empty training split is not refused")
	}
}

func norm(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}
