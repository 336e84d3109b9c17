package clustering

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// TestYinyangPartialGroups: with groups of several panels, of which the
// local filter skips some, the bounds a partly evaluated group keeps (its
// skipped panels' old bound minus their drift) leave every assignment,
// the objective history and the rows within rounding those of full
// passes.
func TestYinyangPartialGroups(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(5))
	n, d, k := 3000, 16, 192
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := 0; i < n; i++ {
		c := i % 150
		for t := 0; t < d; t++ {
			x.Data[i*d+t] = float32(float64((c*7+t*3)%11)*0.4 + 0.6*rng.NormFloat64())
		}
	}
	opt, err := KMeansPreset("roth")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full := opt
	full.fullPasses = true
	want, err := KMeans(ctx, x, k, full)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{48, 64} {
		o := opt
		o.groupSize = size
		got, err := KMeans(ctx, x, k, o)
		if err != nil {
			t.Fatal(err)
		}
		var pe, fe int64
		for p := range got.PairEvals {
			pe += got.PairEvals[p]
			fe += want.PairEvals[p]
		}
		t.Logf("groups of %d: %.3f of the full passes' pairs; %d rows within rounding", size, float64(pe)/float64(fe), got.RoundingRows)
		if fmt.Sprint(got.Assign) != fmt.Sprint(want.Assign) || fmt.Sprint(got.History) != fmt.Sprint(want.History) || fmt.Sprint(got.RoundingPasses) != fmt.Sprint(want.RoundingPasses) || pe >= fe {
			t.Errorf("groups of %d: pruned run differs from full passes (pairs %d of %d)", size, pe, fe)
		}
	}
}
