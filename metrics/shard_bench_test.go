package metrics

import (
	"context"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// BenchmarkMerge merges 16 partials of 100 000 queries (query/gallery, 6
// k-NN values each): the merge's own cost, which reads labels and
// per-query terms only (the input checks included), not the search.
func BenchmarkMerge(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	nq, ng, d := 100000, 2000, 8
	q := mat32.Matrix{Rows: nq, Cols: d, Data: make([]float32, nq*d)}
	g := mat32.Matrix{Rows: ng, Cols: d, Data: make([]float32, ng*d)}
	for i := range q.Data {
		q.Data[i] = float32(rng.NormFloat64())
	}
	for i := range g.Data {
		g.Data[i] = float32(rng.NormFloat64())
	}
	ql, gl := make([]int32, nq), make([]int32, ng)
	for i := range ql {
		ql[i] = int32(rng.Intn(500))
	}
	for i := range gl {
		gl[i] = int32(i % 500)
	}
	in := Input{Emb: q, Labels: ql, Gallery: &g, GalleryLabels: gl}
	opt := Options{Metrics: []string{"R@k", "MAP@R"}, Ks: []int{1, 10}}
	var parts []*Partial
	for i := range 16 {
		p, err := EvaluateShard(context.Background(), in, opt, Shard{Index: i, Count: 16})
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, p)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Merge(context.Background(), in, opt, parts); err != nil {
			b.Fatal(err)
		}
	}
}
