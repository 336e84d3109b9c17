package projection

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// blobs: two Gaussian blobs (σ = 1) in 10-d whose centres are 20 apart.
func blobs(per int, seed int64) (mat32.Matrix, []int) {
	rng := rand.New(rand.NewSource(seed))
	const d = 10
	x := mat32.Matrix{Rows: 2 * per, Cols: d, Data: make([]float32, 2*per*d)}
	var lab []int
	for i := 0; i < 2*per; i++ {
		c := i / per
		for t := 0; t < d; t++ {
			v := rng.NormFloat64()
			if t == 0 {
				v += 20 * float64(c)
			}
			x.Data[i*d+t] = float32(v)
		}
		lab = append(lab, c)
	}
	return x, lab
}

// Every row of P sums to 1, p_{i|i} = 0, and the row entropy is ln(perp)
// within 1e-3 nats (the binary search stops at 1e-10).
func TestAffinitiesHitPerplexity(t *testing.T) {
	x, _ := blobs(40, 1)
	for _, perp := range []float64{5, 30} {
		P, err := Affinities(x, perp, 2)
		if err != nil {
			t.Fatal(err)
		}
		n := x.Rows
		for i := 0; i < n; i++ {
			var sum, h float64
			for j := 0; j < n; j++ {
				p := P[i*n+j]
				sum += p
				if p > 0 {
					h -= p * math.Log(p)
				}
			}
			if P[i*n+i] != 0 || math.Abs(sum-1) > 1e-12 {
				t.Fatalf("perp %g row %d: p_ii %g, sum %v", perp, i, P[i*n+i], sum)
			}
			if math.Abs(h-math.Log(perp)) > 1e-3 {
				t.Fatalf("perp %g row %d: entropy %v, want %v (perplexity %v)", perp, i, h, math.Log(perp), math.Exp(h))
			}
		}
	}
	// Hand case: points 0, 1, 2, 3 on a line: row 1 sees 0 and 2 at equal
	// distance, so p_{0|1} = p_{2|1} at any β, and 3 (farther) gets less.
	x3 := mat32.Matrix{Rows: 4, Cols: 1, Data: []float32{0, 1, 2, 3}}
	P, err := Affinities(x3, 2.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(P[1*4+0]-P[1*4+2]) > 1e-12 || P[1*4+0] <= P[1*4+3] {
		t.Fatalf("row 1 of P: %v", P[4:8])
	}
}

// Two well-separated blobs stay separated in the map: every point's
// nearest map neighbour is in its blob, and the centroids lie farther
// apart than 3 × the mean distance of points to their own centroid. The
// same seed gives the same map whatever the thread count; the cost falls.
func TestTSNESeparatesBlobs(t *testing.T) {
	x, lab := blobs(50, 2)
	var prog int
	opt := Options{Perplexity: 20, Seed: 3, Threads: 2, Progress: func(done, total int) { prog = done }}
	r, err := TSNE(context.Background(), x, opt)
	if err != nil {
		t.Fatal(err)
	}
	if prog != 1000 {
		t.Fatalf("progress reached %d", prog)
	}
	n := x.Rows
	for i := 0; i < n; i++ {
		best, bd := -1, math.Inf(1)
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			d := math.Hypot(r.Y[2*i]-r.Y[2*j], r.Y[2*i+1]-r.Y[2*j+1])
			if d < bd {
				best, bd = j, d
			}
		}
		if lab[best] != lab[i] {
			t.Fatalf("point %d (blob %d): nearest map neighbour %d is in blob %d", i, lab[i], best, lab[best])
		}
	}
	var c [2][2]float64
	for i := 0; i < n; i++ {
		c[lab[i]][0] += r.Y[2*i] / 50
		c[lab[i]][1] += r.Y[2*i+1] / 50
	}
	var spread float64
	for i := 0; i < n; i++ {
		spread += math.Hypot(r.Y[2*i]-c[lab[i]][0], r.Y[2*i+1]-c[lab[i]][1]) / float64(n)
	}
	sep := math.Hypot(c[0][0]-c[1][0], c[0][1]-c[1][1])
	t.Logf("centroid distance %.2f, mean spread %.2f, KL %.4f", sep, spread, r.KL)
	if sep < 3*spread {
		t.Fatalf("blobs not separated: centroid distance %.2f, spread %.2f", sep, spread)
	}
	opt.Threads, opt.Progress = 1, nil
	r1, err := TSNE(context.Background(), x, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Y, r1.Y) {
		t.Fatal("1 and 2 threads give different maps")
	}
	opt.Iters = 20
	early, _ := TSNE(context.Background(), x, opt)
	if !(r.KL < early.KL) {
		t.Fatalf("KL after 1000 steps %v not below KL after 20 %v", r.KL, early.KL)
	}
}

func TestTSNEBadInput(t *testing.T) {
	x, _ := blobs(5, 1)
	if _, err := TSNE(context.Background(), x, Options{Perplexity: 9}); err == nil {
		t.Fatal("perplexity ≥ N−1 accepted")
	}
	if _, err := TSNE(context.Background(), mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{0, 1}}, Options{}); err == nil {
		t.Fatal("2 points accepted")
	}
	x.Data[3] = float32(math.NaN())
	if _, err := TSNE(context.Background(), x, Options{Perplexity: 3}); err == nil {
		t.Fatal("NaN accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x, _ = blobs(5, 1)
	if _, err := TSNE(ctx, x, Options{Perplexity: 3}); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

// The analytic gradient matches central differences of KL(P ‖ Q) (no
// exaggeration), 4 Σ_j (p_ij − q_ij)(y_i − y_j)(1 + ‖y_i − y_j‖²)⁻¹.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	x, _ := blobs(5, 4)
	n := x.Rows
	cond, err := Affinities(x, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	P := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				P[i*n+j] = (cond[i*n+j] + cond[j*n+i]) / (2 * float64(n))
			}
		}
	}
	rng := rand.New(rand.NewSource(5))
	Y := make([]float64, 2*n)
	for i := range Y {
		Y[i] = rng.NormFloat64()
	}
	grad := make([]float64, 2*n)
	gradient(P, Y, make([]float64, n*n), make([]float64, n), grad, n, 1, 1)
	const h = 1e-6
	for k := range Y {
		y0 := Y[k]
		Y[k] = y0 + h
		up := klCost(P, Y, n)
		Y[k] = y0 - h
		down := klCost(P, Y, n)
		Y[k] = y0
		if num := (up - down) / (2 * h); math.Abs(num-grad[k]) > 1e-6*math.Max(1, math.Abs(num)) {
			t.Fatalf("coordinate %d: analytic %v, numeric %v", k, grad[k], num)
		}
	}
}
