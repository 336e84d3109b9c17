package reports

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/texcheck"
	"github.com/dmlbench/dmlbench/metrics"
)

// eval --format latex with every default metric and two long-named files
// fits a one-column article and a 237 pt column of a two-column paper.
func TestResultsLaTeXFits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := mat32.Matrix{Rows: 60, Cols: 8, Data: make([]float32, 480)}
	labels := make([]int32, 60)
	for i := range labels {
		labels[i] = int32(i % 6)
		for j := range 8 {
			m.Data[i*8+j] = float32(rng.NormFloat64()) + float32(labels[i]%3)
		}
	}
	res, err := metrics.Evaluate(context.Background(), metrics.Input{Emb: m, Labels: labels}, metrics.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Metrics) < 10 {
		t.Fatalf("only %d metrics", len(res.Metrics))
	}
	var b bytes.Buffer
	rs := []NamedResult{{Name: "runs/multisimilarity-s0/test_emb.npy", Result: res}, {Name: "runs/margin-s0/test_emb.npy", Result: res}}
	if err := WriteResults(&b, rs, "latex"); err != nil {
		t.Fatal(err)
	}
	if ok, why := texcheck.Available(); !ok {
		t.Skip(why)
	}
	for _, layout := range []string{texcheck.OneColumn, texcheck.TwoColumn} {
		r, err := texcheck.Compile(t.TempDir(), "eval", texcheck.Document(layout, b.String()))
		if err != nil {
			t.Fatalf("%v\n%s", err, r.Log)
		}
		if len(r.Overfull) > 0 {
			t.Errorf("%s: eval's table overflows by %v pt:\n%s", layout, r.Overfull, b.String())
		}
	}
}
