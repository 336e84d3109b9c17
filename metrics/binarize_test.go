package metrics

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/knn"
)

// Four 3-d items where Hamming ranking of the thresholded codes differs
// from L2 ranking of the floats:
//
//	0: ( 0.1 , 0.1, 0.1) class 0 → code +++
//	1: ( 2   , 2  , 2  ) class 0 → code +++
//	2: (−0.05, 0.1, 0.1) class 1 → code −++
//	3: (−2   , 0.1, 0.1) class 1 → code −++
//
// Float L2: d02 = 0.15, d03 = 2.1, d01 = 3.29, d23 = 1.95, d12 = 3.38,
// d13 = 4.82, so the nearest neighbours are 0→2 ✗, 1→0 ✓, 2→0 ✗, 3→2 ✓:
// R@1 = 1/2. Hamming: H01 = H23 = 0, all other pairs 1, so 0→1, 1→0, 2→3,
// 3→2: R@1 = 1.
func TestBinarizeHammingRanking(t *testing.T) {
	x := mat32.Matrix{Rows: 4, Cols: 3, Data: []float32{0.1, 0.1, 0.1, 2, 2, 2, -0.05, 0.1, 0.1, -2, 0.1, 0.1}}
	labels := []int32{0, 0, 1, 1}
	opt := Options{Metrics: []string{"R@1"}}
	r, err := Evaluate(context.Background(), Input{Emb: x, Labels: labels}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Metrics["R@1"] != 0.5 {
		t.Fatalf("float R@1 = %v, want 0.5", r.Metrics["R@1"])
	}
	b := Binarize(x)
	want := []float32{1, 1, 1, 1, 1, 1, -1, 1, 1, -1, 1, 1}
	for i := range want {
		if b.Data[i] != want[i] {
			t.Fatalf("codes %v, want %v", b.Data, want)
		}
	}
	r, err = Evaluate(context.Background(), Input{Emb: b, Labels: labels}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Metrics["R@1"] != 1 {
		t.Fatalf("Hamming R@1 = %v, want 1", r.Metrics["R@1"])
	}
}

// Zero maps to −1; the exact k-NN on codes returns 4 × the Hamming count
// (compared with a direct count), neighbours in (distance, index) order.
func TestBinarizeDistancesAreHamming(t *testing.T) {
	if b := Binarize(mat32.Matrix{Rows: 1, Cols: 3, Data: []float32{0, -0.0, 1e-30}}); b.Data[0] != -1 || b.Data[1] != -1 || b.Data[2] != 1 {
		t.Fatalf("codes %v", b.Data)
	}
	rng := rand.New(rand.NewSource(1))
	const n, d = 60, 37
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	b := Binarize(x)
	nb, err := knn.Exact{}.Search(context.Background(), b, b, n-1, knn.Options{Metric: knn.L2, Exclude: knn.ExcludeSelf})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		prevH, prevID := -1, int32(-1)
		for j := 0; j < n-1; j++ {
			id := nb.IDs[i*(n-1)+j]
			h := 0
			for k := 0; k < d; k++ {
				if (x.Data[i*d+k] > 0) != (x.Data[int(id)*d+k] > 0) {
					h++
				}
			}
			if got := nb.Dist[i*(n-1)+j]; got != float32(4*h) || math.Mod(float64(got), 4) != 0 {
				t.Fatalf("query %d: distance %v for Hamming %d", i, got, h)
			}
			if h < prevH || h == prevH && id < prevID {
				t.Fatalf("query %d: order (H %d, id %d) after (H %d, id %d)", i, h, id, prevH, prevID)
			}
			prevH, prevID = h, id
		}
	}
}

func TestBinarizeInput(t *testing.T) {
	g := mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{-1, 2}}
	in, err := BinarizeInput(Input{Emb: mat32.Matrix{Rows: 1, Cols: 2, Data: []float32{0.5, 0}}, Gallery: &g}, "L2")
	if err != nil || in.Emb.Data[0] != 1 || in.Emb.Data[1] != -1 || in.Gallery.Data[0] != -1 || in.Gallery.Data[1] != 1 || g.Data[1] != 2 {
		t.Fatalf("%+v %v", in, err)
	}
	if _, err := BinarizeInput(in, "cosine"); !usage.Is(err) {
		t.Fatalf("cosine: %v", err)
	}
}
