package metrics

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestNMIMoveShift: the O(1) update of nmiMoveShift equals recomputing
// NMI (the contingency's, checked against scikit-learn elsewhere) with
// each tied row moved alone.
func TestNMIMoveShift(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 20; trial++ {
		n := 5 + rng.Intn(60)
		labels, assign := make([]int32, n), make([]int32, n)
		pairs := make([][2]int32, n)
		for i := range labels {
			labels[i], assign[i] = int32(rng.Intn(4)), int32(rng.Intn(5))
			pairs[i] = [2]int32{-1, -1}
			if rng.Intn(3) == 0 {
				pairs[i] = [2]int32{assign[i], int32(rng.Intn(6))}
				if rng.Intn(2) == 0 {
					pairs[i] = [2]int32{pairs[i][1], assign[i]} // the other side of the tie
				}
			}
		}
		nmi := func(a []int32) float64 {
			c, err := newContingency(labels, a)
			if err != nil {
				t.Fatal(err)
			}
			return c.NMI()
		}
		base := nmi(assign)
		want := 0.0
		for i, p := range pairs {
			if p[1] < 0 {
				continue
			}
			to := p[1]
			if to == assign[i] {
				to = p[0]
			}
			moved := append([]int32(nil), assign...)
			moved[i] = to
			want += math.Abs(nmi(moved) - base)
		}
		if got := nmiMoveShift(labels, assign, pairs); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: shift %g, recomputed %g", trial, got, want)
		}
	}
}

// ulpClassCopies is classes of points·copies rows in dimension d: class
// means at scale 4, points spread around them by N(0, 1), and copies of
// each point 1 ulp from it in one coordinate. k-means's initial centroids
// often include two copies of one point, 1 ulp apart; every row nearest
// to them is then assigned by rounding, and most of them (the other
// points of the class) are far from both, so float32 keeps their
// distances' bits (no cancellation warning).
func ulpClassCopies(classes, points, copies, d int) (mat32.Matrix, []int32) {
	rng := rand.New(rand.NewSource(4))
	n := classes * points * copies
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	labels := make([]int32, n)
	mean, v := make([]float64, d), make([]float32, d)
	i := 0
	for b := 0; b < classes; b++ {
		for k := range mean {
			mean[k] = 4 * rng.NormFloat64()
		}
		for p := 0; p < points; p++ {
			for k := range v {
				v[k] = float32(mean[k] + rng.NormFloat64())
			}
			for c := 0; c < copies; c++ {
				row := x.Row(i)
				copy(row, v)
				k := rng.Intn(d)
				row[k] = math.Nextafter32(row[k], float32(math.Inf(2*(c%2)-1)))
				labels[i] = int32(b)
				i++
			}
		}
	}
	return x, labels
}

// TestKMeansRoundingWarning: the JSON result always carries the k-means
// rounding counts; the warning speaks where tied decisions can move NMI
// at the 4 digits shown (1-ulp copies) under the peers' conventions
// (strict records the counts only) and stays quiet on the Omniglot
// fixture, where no decision is tied.
func TestKMeansRoundingWarning(t *testing.T) {
	ctx := context.Background()
	warned := func(res *Result) bool {
		for _, w := range res.Warnings {
			if strings.Contains(w, "tied within float32 rounding") {
				return true
			}
		}
		return false
	}
	x, labels := ulpClassCopies(20, 4, 10, 8)
	for _, conv := range []Convention{Strict, Roth, PML} {
		res, err := Evaluate(ctx, Input{Emb: x, Labels: labels}, Options{Convention: conv, Metrics: []string{"NMI"}})
		if err != nil {
			t.Fatal(err)
		}
		kr := res.KMeansRounding
		t.Logf("%s, 1-ulp copies: %+v, NMI %.6f", conv, kr, res.Metrics["NMI"])
		if kr == nil || kr.TiedRows == 0 || kr.Rows < kr.TiedRows || len(kr.Passes) != 21 || kr.NMIShift < nmiShown || warned(res) != (conv != Strict) || len(res.Warnings) != 1 && conv == Roth {
			t.Errorf("%s, 1-ulp copies: rounding %+v, warnings %q", conv, kr, res.Warnings)
		}
	}
	ds, err := fixtures.LoadOmniglot(fixtures.OmniglotOptions{Size: 14})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(ctx, Input{Emb: ds.Test.X, Labels: ds.Test.Labels}, Options{Convention: Roth, Metrics: []string{"NMI"}})
	if err != nil {
		t.Fatal(err)
	}
	kr := res.KMeansRounding
	t.Logf("Omniglot test split (%d × %d): %+v, NMI %.6f", ds.Test.X.Rows, ds.Test.X.Cols, kr, res.Metrics["NMI"])
	if kr == nil || kr.TiedRows != 0 || warned(res) {
		t.Errorf("Omniglot: rounding %+v, warnings %q", kr, res.Warnings)
	}
}
