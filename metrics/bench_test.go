package metrics

import (
	"context"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// clustered returns n rows in d dimensions from c Gaussian classes around
// random unit means (noise σ), with class sizes as equal as possible.
func clustered(n, d, c int, sigma float64, seed int64) (mat32.Matrix, []int32) {
	rng := rand.New(rand.NewSource(seed))
	means := make([]float64, c*d)
	for i := range means {
		means[i] = rng.NormFloat64() / 8
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		k := i % c
		y[i] = int32(k)
		for j := 0; j < d; j++ {
			x.Data[i*d+j] = float32(means[k*d+j] + sigma*rng.NormFloat64())
		}
	}
	return x, y
}

func benchEvaluate(b *testing.B, n, d, c int) {
	x, y := clustered(n, d, c, 0.05, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Evaluate(context.Background(), Input{Emb: x, Labels: y}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if r.Metrics["R@1"] <= 0 || r.Metrics["NMI"] <= 0 || len(r.Metrics) != 13 {
			b.Fatalf("implausible result %v", r.Metrics)
		}
		for k, v := range r.Timings {
			b.ReportMetric(v, k+"-s")
		}
	}
}

// BenchmarkEvaluate_20k: the default metric set on 20 000 × 128 rows in 500
// well-clustered classes (σ = 0.05); BenchmarkEvaluate_SOP the same at the
// Stanford Online Products test size (60 502 × 128, 11 316 classes). Each
// reports the stage timings; measured figures are in the README's Speed
// section.
func BenchmarkEvaluate_20k(b *testing.B) { benchEvaluate(b, 20000, 128, 500) }

func BenchmarkEvaluate_SOP(b *testing.B) {
	if testing.Short() {
		b.Skip("SOP-size benchmark skipped in -short")
	}
	benchEvaluate(b, 60502, 128, 11316)
}

func BenchmarkRetrievalScoring_SOP(b *testing.B) {
	// Scoring alone (no search): 60 502 queries × depth 1000.
	n, depth := 60502, 1000
	rng := rand.New(rand.NewSource(2))
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i % 11316)
	}
	nb := &knn.Neighbors{N: n, K: depth, IDs: make([]int32, n*depth), Dist: make([]float32, n*depth)}
	for i := range nb.IDs {
		nb.IDs[i] = int32(rng.Intn(n))
	}
	w, _ := resolve(nil, nil)
	p, err := newRetrievalPlan(Strict, w, y, y, 11316, true, false, planExtras{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m, _ := p.score(nb, 0); m["R@1"] < 0 {
			b.Fatal("negative")
		}
	}
}
