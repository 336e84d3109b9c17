//go:build faiss

package clustering_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

// parityEmbedding returns n rows of c classes (row i in class i % c): class
// means uniform on the unit sphere plus Gaussian noise sigma per
// coordinate, rows L2-normalised, as a trained embedding's test split.
func parityEmbedding(seed int64, n, d, c int, sigma float64) (mat32.Matrix, []int32) {
	rng := rand.New(rand.NewSource(seed))
	means := make([]float64, c*d)
	for k := 0; k < c; k++ {
		mu := means[k*d : (k+1)*d]
		var s float64
		for t := range mu {
			mu[t] = rng.NormFloat64()
			s += mu[t] * mu[t]
		}
		for t := range mu {
			mu[t] /= math.Sqrt(s)
		}
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	labels := make([]int32, n)
	row := make([]float64, d)
	for i := 0; i < n; i++ {
		labels[i] = int32(i % c)
		mu := means[(i%c)*d : (i%c+1)*d]
		var s float64
		for t := range row {
			row[t] = mu[t] + sigma*rng.NormFloat64()
			s += row[t] * row[t]
		}
		for t, v := range row {
			x.Data[i*d+t] = float32(v / math.Sqrt(s))
		}
	}
	return x, labels
}

// TestPureGoKMeansMatchesFaissMetrics: the pure-Go binary's k-means
// (metrics.Evaluate with no KMeans hook) against faiss's own k-means under
// the same convention preset (clustering.KMeansPreset, as `eval --backend
// faiss` runs it): NMI within 0.002 and F1 within 0.005, on well-separated
// and on noisy embeddings, a 3000 × 64 60-class shape among them.
func TestPureGoKMeansMatchesFaissMetrics(t *testing.T) {
	cases := []struct {
		name        string
		n, d, c     int
		sigma       float64
		conventions []metrics.Convention
	}{
		{"separated 3000x64 c60", 3000, 64, 60, 0.08, []metrics.Convention{metrics.Roth, metrics.PML}},
		{"noisy 3000x64 c60", 3000, 64, 60, 0.2, []metrics.Convention{metrics.Roth, metrics.PML}},
		{"separated 4000x128 c500", 4000, 128, 500, 0.05, []metrics.Convention{metrics.Roth}},
		{"noisy 4000x32 c100", 4000, 32, 100, 0.3, []metrics.Convention{metrics.Roth, metrics.PML}},
		// pml trains on 256·10 of the 4000 rows.
		{"noisy 4000x32 c10", 4000, 32, 10, 0.4, []metrics.Convention{metrics.Roth, metrics.PML}},
	}
	ctx := context.Background()
	for i, c := range cases {
		x, labels := parityEmbedding(int64(i+1), c.n, c.d, c.c, c.sigma)
		for _, conv := range c.conventions {
			preset, err := clustering.KMeansPreset(string(conv))
			if err != nil {
				t.Fatal(err)
			}
			faiss := func(x mat32.Matrix, k int, seed int64) ([]int32, error) {
				o := preset
				o.Seed = seed
				r, err := clustering.FaissKMeans(ctx, x, k, o)
				if err != nil {
					return nil, err
				}
				return r.Assign, nil
			}
			opt := metrics.Options{Metrics: []string{"NMI", "F1"}, Convention: conv}
			g, err := metrics.Evaluate(ctx, metrics.Input{Emb: x, Labels: labels}, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Clustering = faiss
			f, err := metrics.Evaluate(ctx, metrics.Input{Emb: x, Labels: labels}, opt)
			if err != nil {
				t.Fatal(err)
			}
			dn, df := g.Metrics["NMI"]-f.Metrics["NMI"], g.Metrics["F1"]-f.Metrics["F1"]
			t.Logf("%s %s: NMI Go %.6f faiss %.6f (%+.1e), F1 Go %.6f faiss %.6f (%+.1e)", c.name, conv,
				g.Metrics["NMI"], f.Metrics["NMI"], dn, g.Metrics["F1"], f.Metrics["F1"], df)
			if math.Abs(dn) > 0.002 || math.Abs(df) > 0.005 {
				t.Errorf("%s %s: NMI differs by %.4f (max 0.002) or F1 by %.4f (max 0.005)", c.name, conv, dn, df)
			}
		}
	}
}
