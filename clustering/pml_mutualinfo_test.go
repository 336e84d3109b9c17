package clustering_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

// TestPMLMutualInformationMatchesFaiss is pytorch-metric-learning v2.8.1's
// TestMutualInformation (tests/utils/test_calculate_accuracies.py: two
// Gaussian classes of 2000 rows in 32-D, the second shifted by 0.5 or 1,
// NMI and AMI with its default k-means, faiss.Kmeans(d, 2, niter=20)) on
// data drawn once by testdata/faiss_kmeans_gen.py. `eval --compat pml`
// without faiss must give the NMI and AMI of faiss's own clustering: the
// golden's assignment scored by the same contingency code.
func TestPMLMutualInformationMatchesFaiss(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "faiss_kmeans_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Scale float64 `json:"scale"`
		Cases []struct {
			Name, Preset   string
			Rows, Cols, K  int
			Assign, Labels []int32
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	seen := 0
	for _, c := range g.Cases {
		if !strings.HasPrefix(c.Name, "pmlmutualinfo") {
			continue
		}
		seen++
		b, err := os.ReadFile(filepath.Join("testdata", "faiss_kmeans", c.Name+".i16"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 2*c.Rows*c.Cols {
			t.Fatalf("%s: %d bytes", c.Name, len(b))
		}
		x := mat32.Matrix{Rows: c.Rows, Cols: c.Cols, Data: make([]float32, c.Rows*c.Cols)}
		for i := range x.Data {
			x.Data[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / float32(g.Scale)
		}
		in := metrics.Input{Emb: x, Labels: c.Labels}
		opt := metrics.Options{Metrics: []string{"NMI", "AMI"}, Convention: metrics.PML}
		got, err := metrics.Evaluate(ctx, in, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Clustering = func(mat32.Matrix, int, int64) ([]int32, error) { return c.Assign, nil }
		want, err := metrics.Evaluate(ctx, in, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"NMI", "AMI"} {
			t.Logf("%s %s: pure Go %.6f, faiss %.6f", c.Name, m, got.Metrics[m], want.Metrics[m])
			if math.Abs(got.Metrics[m]-want.Metrics[m]) > 1e-12 {
				t.Errorf("%s %s: pure Go %.6f, faiss %.6f", c.Name, m, got.Metrics[m], want.Metrics[m])
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d mutual-information cases in the golden, want 2", seen)
	}
}
