package metrics

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/clustering"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// float32Set returns n rows of dimension d in `classes` classes: class
// centres with coordinates centre·(±1) plus spread·N(0, 1) noise, each
// value then mapped to scale·v + offset (float64, rounded once).
func float32Set(seed int64, n, d, classes int, centre, spread, scale, offset float64) Input {
	rng := rand.New(rand.NewSource(seed))
	cs := make([]float64, classes*d)
	for i := range cs {
		cs[i] = centre * float64(1-2*rng.Intn(2))
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	labels := make([]int32, n)
	for i := 0; i < n; i++ {
		labels[i] = int32(i % classes)
		for t := 0; t < d; t++ {
			v := cs[int(labels[i])*d+t] + spread*rng.NormFloat64()
			x.Data[i*d+t] = float32(scale*v + offset)
		}
	}
	return Input{Emb: x, Labels: labels}
}

// TestFloat32RangeConventions: embeddings whose float32 distances
// overflow (×1e20), underflow (×1e-30) or cancel (offset +1e4; classes at
// ±500 with spread 1e-3, which cancels inside each class and shows in
// k-means with more clusters than classes) are a warning under roth and
// pml, which reproduce peers that compute the same float32 expansion.
// Strict scores all but overflow (an input error) with the R@1 of a
// float64 ranking and no warning; the same data unscaled pass without a
// float32 warning everywhere.
func TestFloat32RangeConventions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		in       Input
		clusters int
		want     string
	}{
		{"plain", float32Set(1, 400, 16, 8, 1, 0.5, 1, 0), 0, ""},
		{"x1e20", float32Set(1, 400, 16, 8, 1, 0.5, 1e20, 0), 0, "overflow"},
		{"x1e-30", float32Set(1, 400, 16, 8, 1, 0.5, 1e-30, 0), 0, "underflow"},
		{"+1e4", float32Set(1, 400, 16, 8, 1, 0.5, 1, 1e4), 0, "cancellation"},
		{"±500 spread 1e-3", float32Set(2, 400, 16, 8, 500, 1e-3, 1, 0), 40, "k-means"},
	}
	for _, c := range cases {
		for _, conv := range []Convention{Strict, Roth, PML} {
			opt := Options{Convention: conv, Metrics: []string{"R@1", "NMI"}, Clusters: c.clusters}
			res, err := Evaluate(context.Background(), c.in, opt)
			label := c.name + " " + string(conv)
			if c.want == "" {
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				for _, w := range res.Warnings {
					if strings.Contains(w, "float32") {
						t.Fatalf("%s: warning %q", label, w)
					}
				}
				continue
			}
			if conv == Strict && c.want == "overflow" {
				if !errors.Is(err, ErrInput) || !errors.Is(err, clustering.ErrFloat32Range) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: err %v, want an input error about %s", label, err, c.want)
				}
				continue
			}
			if conv == Strict {
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				for _, w := range res.Warnings {
					if strings.Contains(w, "float32") {
						t.Fatalf("%s: warning %q", label, w)
					}
				}
				if got, want := res.Metrics["R@1"], ref64(c.in, []int{1})["R@1"]; got != want {
					t.Fatalf("%s: R@1 %v, float64 reference %v", label, got, want)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			found := 0
			for _, w := range res.Warnings {
				if strings.Contains(w, "float32") {
					found++
					if !strings.Contains(w, c.want) {
						found = -100
					}
				}
			}
			if found != 1 {
				t.Fatalf("%s: warnings %q, want one about float32 %s", label, res.Warnings, c.want)
			}
		}
	}
}

// TestKMeansWarningsShown: faiss's "please provide at least N training
// points" (pml's preset asks for 39 rows per centroid) reaches
// Result.Warnings.
func TestKMeansWarningsShown(t *testing.T) {
	t.Parallel()
	in := float32Set(3, 200, 8, 10, 1, 0.5, 1, 0)
	res, err := Evaluate(context.Background(), in, Options{Convention: PML, Metrics: []string{"NMI"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "k-means: clustering 200 points to 10 centroids: please provide at least 390 training points"
	found := false
	for _, w := range res.Warnings {
		found = found || w == want
	}
	if !found {
		t.Fatalf("warnings %q, want %q", res.Warnings, want)
	}
	res, err = Evaluate(context.Background(), in, Options{Convention: Strict, Metrics: []string{"NMI"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("strict (1 row per centroid suffices): warnings %q", res.Warnings)
	}
}

// TestFloat32WarnOption: with Options.Float32Warn (set by training runs)
// float32 overflow under strict is a warning and the metrics are still
// computed.
func TestFloat32WarnOption(t *testing.T) {
	t.Parallel()
	in := float32Set(1, 400, 16, 8, 1, 0.5, 1e20, 0)
	opt := Options{Convention: Strict, Metrics: []string{"R@1"}, Float32Warn: true}
	res, err := Evaluate(context.Background(), in, opt)
	if err != nil {
		t.Fatalf("Float32Warn: %v", err)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "overflow")
	}
	if !found {
		t.Fatalf("warnings %q lack the overflow warning", res.Warnings)
	}
	opt.Float32Warn = false
	if _, err := Evaluate(context.Background(), in, opt); !errors.Is(err, ErrInput) {
		t.Fatalf("strict without Float32Warn: err %v, want ErrInput", err)
	}
}
