package clustering

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// naiveKMeans is an independent, obviously-correct transcription of the
// algorithm documented on KMeans (float64 distances, O(n·k·D) loops), using
// faiss's random streams so the trajectories can be compared exactly.
func naiveKMeans(x mat32.Matrix, k int, opt KMeansOptions) ([]int32, []float32, float64) {
	n, d := x.Rows, x.Cols
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = x.Row(i)
	}
	train := rows
	if opt.MaxPointsPerCentroid > 0 && n > k*opt.MaxPointsPerCentroid {
		perm := faissRandPerm(n, opt.Seed)
		train = nil
		for _, p := range perm[:k*opt.MaxPointsPerCentroid] {
			train = append(train, rows[p])
		}
	}
	cent := make([][]float32, k)
	if len(train) == k {
		for j := range cent {
			cent[j] = append([]float32(nil), rows[j]...)
		}
	} else {
		perm := faissRandPerm(len(train), opt.Seed+1)
		for j := range cent {
			cent[j] = append([]float32(nil), train[perm[j]]...)
		}
		for it := 0; it < opt.NIter; it++ {
			counts := make([]float32, k)
			sums := make([][]float32, k)
			for j := range sums {
				sums[j] = make([]float32, d)
			}
			for _, p := range train {
				a, _ := nearest(p, cent)
				counts[a]++
				for t := range p {
					sums[a][t] += p[t]
				}
			}
			for j := range cent {
				inv := 1 / counts[j]
				for t := range cent[j] {
					if counts[j] == 0 {
						cent[j][t] = 0
					} else {
						cent[j][t] = sums[j][t] * inv
					}
				}
			}
			flat := make([]float32, 0, k*d)
			for _, c := range cent {
				flat = append(flat, c...)
			}
			splitEmpty(flat, counts, d, len(train))
			for j := range cent {
				copy(cent[j], flat[j*d:(j+1)*d])
			}
		}
	}
	assign := make([]int32, n)
	var obj float64
	for i, p := range rows {
		a, dd := nearest(p, cent)
		assign[i] = int32(a)
		obj += dd
	}
	flat := make([]float32, 0, k*d)
	for _, c := range cent {
		flat = append(flat, c...)
	}
	return assign, flat, obj
}

func nearest(p []float32, cent [][]float32) (int, float64) {
	best, bi := math.Inf(1), 0
	for j, c := range cent {
		if s := knn.SquaredL2(p, c); s < best {
			best, bi = s, j
		}
	}
	return bi, best
}

// blobs returns m points around each of the given centres (spread ±0.5).
func blobs(rng *rand.Rand, centres [][]float32, m int) (mat32.Matrix, []int) {
	d := len(centres[0])
	var data []float32
	var lab []int
	for c, cen := range centres {
		for i := 0; i < m; i++ {
			for _, v := range cen {
				data = append(data, v+float32(rng.Float64()-0.5))
			}
			lab = append(lab, c)
		}
	}
	// Shuffle rows so blobs are interleaved.
	n := len(lab)
	perm := rng.Perm(n)
	sd := make([]float32, len(data))
	sl := make([]int, n)
	for i, p := range perm {
		copy(sd[i*d:(i+1)*d], data[p*d:(p+1)*d])
		sl[i] = lab[p]
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: sd}, sl
}

// samePartition reports whether a and b induce the same partition.
func samePartition(a []int32, b []int) bool {
	ab, ba := map[int32]int{}, map[int]int32{}
	for i := range a {
		if v, ok := ab[a[i]]; ok && v != b[i] {
			return false
		}
		if v, ok := ba[b[i]]; ok && v != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

func TestKMeansSeparableBlobs(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	x, lab := blobs(rng, [][]float32{{0, 0, 0}, {20, 0, 0}, {0, 20, 0}, {0, 0, 20}}, 30)
	opt := DefaultKMeansOptions()
	bestObj := math.Inf(1)
	var best *KMeansResult
	for seed := int64(1); seed <= 10; seed++ {
		opt.Seed = seed
		res, err := KMeans(context.Background(), x, 4, opt)
		if err != nil {
			t.Fatal(err)
		}
		wa, wc, wobj := naiveKMeans(x, 4, opt)
		if !reflect.DeepEqual(res.Assign, wa) {
			t.Fatalf("seed %d: assignments differ from the naive Lloyd", seed)
		}
		for i := range wc {
			if math.Abs(float64(wc[i]-res.Centroids.Data[i])) > 1e-5 {
				t.Fatalf("seed %d: centroid value %d = %v, naive %v", seed, i, res.Centroids.Data[i], wc[i])
			}
		}
		if math.Abs(res.Objective-wobj) > 1e-9*wobj {
			t.Fatalf("seed %d: objective %v, naive %v", seed, res.Objective, wobj)
		}
		if res.Objective < bestObj {
			bestObj, best = res.Objective, res
		}
	}
	// The best of 10 restarts recovers the four blobs exactly; each blob's
	// points lie within √3/2 of its centre, so the optimum is below 120·0.75.
	if !samePartition(best.Assign, lab) {
		t.Fatalf("best restart does not recover the blobs: %v", best.Assign)
	}
	if bestObj > 120*0.75 {
		t.Fatalf("objective %v too large for the recovered partition", bestObj)
	}
}

func TestKMeansEmptyClusterSplit(t *testing.T) {
	// Six points at 1 and one at 10, k = 2. When both initial centroids are
	// copies of 1, every point goes to centroid 0 (ties → lowest index),
	// cluster 1 is empty and must be split off cluster 0 (the only donor):
	// c1 = c0·(1+ε), c0 = c0·(1−ε). The next iteration separates {1…} from
	// {10}: centroids 1 and 10, objective 0.
	x := mat32.Matrix{Rows: 7, Cols: 1, Data: []float32{1, 1, 1, 10, 1, 1, 1}}
	var seed int64
	for seed = 1; ; seed++ {
		p := faissRandPerm(7, seed+1)
		if p[0] != 3 && p[1] != 3 {
			break
		}
	}
	opt := DefaultKMeansOptions()
	opt.Seed = seed
	res, err := KMeans(context.Background(), x, 2, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Splits != 1 {
		t.Fatalf("splits = %d, want 1", res.Splits)
	}
	want := []int32{0, 0, 0, 1, 0, 0, 0}
	if !reflect.DeepEqual(res.Assign, want) || res.Objective != 0 {
		t.Fatalf("assign %v obj %v; want %v, 0", res.Assign, res.Objective, want)
	}
	if res.Centroids.Data[0] != 1 || res.Centroids.Data[1] != 10 {
		t.Fatalf("centroids %v, want [1 10]", res.Centroids.Data)
	}
	// The split itself, checked by hand on one iteration.
	cent := []float32{4, -2, 0, 0}
	counts := []float32{5, 0}
	if n := splitEmpty(cent, counts, 2, 5); n != 1 {
		t.Fatalf("split count %d", n)
	}
	e := float32(1.0 / 1024)
	wantC := []float32{4 * (1 - e), -2 * (1 + e), 4 * (1 + e), -2 * (1 - e)}
	if !reflect.DeepEqual(cent, wantC) || counts[0] != 2.5 || counts[1] != 2.5 {
		t.Fatalf("split: cent %v counts %v; want %v [2.5 2.5]", cent, counts, wantC)
	}
}

// TestSplitEmptyDonorScan follows faiss's split_clusters by hand on
// h = (0, 3, 0, 6), nt = 9, k = 4 (so p_j = (h_j − 1)/5), with the draws of
// RandomGenerator(1234): 0.1915, 0.4977, 0.6221, 0.8178, 0.4377, 0.6121,
// 0.7854, 0.7714, 0.7800, 0.8607, 0.2726, 0.1506 (TestFaissRNGMatchesFaiss).
// Cluster 0: the scan rejects 0 (p = −0.2), 1 (0.4977 ≥ 0.4), 2, and takes
// 3 (0.8178 < 1): h = (3, 3, 0, 3). Cluster 2: p = (0.4, 0.4, −0.2, 0.4);
// the draws 0.4377 … 0.2726 reject 0, 1, 2, 3, 0, 1, 2 and 0.1506 takes 3:
// h = (3, 3, 1.5, 1.5).
func TestSplitEmptyDonorScan(t *testing.T) {
	cent := []float32{0, 10, 0, 100}
	counts := []float32{0, 3, 0, 6}
	if n := splitEmpty(cent, counts, 1, 9); n != 2 {
		t.Fatalf("splits %d, want 2", n)
	}
	up := func(v float32) float32 { return float32(float64(v) * (1 + 1.0/1024)) }
	down := func(v float32) float32 { return float32(float64(v) * (1 - 1.0/1024)) }
	c3 := down(100)
	wantC := []float32{up(100), 10, up(c3), down(c3)}
	if !reflect.DeepEqual(cent, wantC) || !reflect.DeepEqual(counts, []float32{3, 3, 1.5, 1.5}) {
		t.Fatalf("cent %v counts %v; want %v [3 3 1.5 1.5]", cent, counts, wantC)
	}
}

func TestKMeansMatchesNaiveRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	x := randMatrix(rng, 700, 19)
	for _, k := range []int{1, 7, 64, 700} {
		opt := DefaultKMeansOptions()
		opt.Seed = int64(k)
		res, err := KMeans(context.Background(), x, k, opt)
		if err != nil {
			t.Fatal(err)
		}
		wa, _, wobj := naiveKMeans(x, k, opt)
		if !reflect.DeepEqual(res.Assign, wa) {
			t.Fatalf("k=%d: assignments differ from naive", k)
		}
		if math.Abs(res.Objective-wobj) > 1e-9*(1+wobj) {
			t.Fatalf("k=%d: objective %v vs naive %v", k, res.Objective, wobj)
		}
		if k == 700 && (res.Iterations != 0 || res.Objective > 1e-9) {
			t.Fatalf("k = n must copy the points: iterations %d objective %v", res.Iterations, res.Objective)
		}
		if k < 700 && len(res.History) != opt.NIter {
			t.Fatalf("history has %d entries", len(res.History))
		}
	}
}

func TestKMeansDeterministicAcrossThreads(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	x := randMatrix(rng, 1500, 24)
	opt := DefaultKMeansOptions()
	opt.Threads = 1
	a, err := KMeans(context.Background(), x, 40, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []int{1, 2, 5} {
		opt.Threads = th
		b, err := KMeans(context.Background(), x, 40, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Assign, b.Assign) || !reflect.DeepEqual(a.Centroids.Data, b.Centroids.Data) || a.Objective != b.Objective {
			t.Fatalf("threads=%d changed the result", th)
		}
	}
	opt.Seed++
	c, _ := KMeans(context.Background(), x, 40, opt)
	if reflect.DeepEqual(a.Centroids.Data, c.Centroids.Data) {
		t.Fatal("a different seed gave identical centroids")
	}
}

func TestKMeansSubsampling(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	x := randMatrix(rng, 1000, 8)
	opt := DefaultKMeansOptions()
	opt.MaxPointsPerCentroid = 10
	res, err := KMeans(context.Background(), x, 5, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.TrainPoints != 50 || len(res.Assign) != 1000 || len(res.Warnings) != 1 {
		t.Fatalf("train points %d, assign %d, warnings %v", res.TrainPoints, len(res.Assign), res.Warnings)
	}
	wa, _, wobj := naiveKMeans(x, 5, opt)
	if !reflect.DeepEqual(res.Assign, wa) || math.Abs(res.Objective-wobj) > 1e-9*wobj {
		t.Fatalf("subsampled run differs from naive (obj %v vs %v)", res.Objective, wobj)
	}
	// Final assignment covers all points: each is at its nearest centroid.
	for i := 0; i < x.Rows; i++ {
		rows := make([][]float32, 5)
		for j := range rows {
			rows[j] = res.Centroids.Row(j)
		}
		if a, _ := nearest(x.Row(i), rows); int32(a) != res.Assign[i] {
			t.Fatalf("row %d not at its nearest centroid", i)
		}
	}
	// No subsampling below the bound; warning when below min points.
	opt.MaxPointsPerCentroid = 256
	opt.MinPointsPerCentroid = 39
	res, _ = KMeans(context.Background(), mat32.Matrix{Rows: 100, Cols: 8, Data: x.Data[:800]}, 3, opt)
	if res.TrainPoints != 100 || len(res.Warnings) != 1 {
		t.Fatalf("train %d warnings %v", res.TrainPoints, res.Warnings)
	}
}

func TestKMeansWithSearcher(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	x := randMatrix(rng, 300, 6)
	opt := DefaultKMeansOptions()
	a, err := KMeans(context.Background(), x, 9, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Searcher = knn.BruteForce{}
	b, err := KMeans(context.Background(), x, 9, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Assign, b.Assign) || math.Abs(a.Objective-b.Objective) > 1e-9*a.Objective {
		t.Fatal("searcher path differs from the built-in kernel")
	}
}

func TestKMeansErrors(t *testing.T) {
	ctx := context.Background()
	x := mat32.Matrix{Rows: 3, Cols: 2, Data: []float32{0, 0, 1, 1, 2, 2}}
	opt := DefaultKMeansOptions()
	cases := map[string]func() error{
		"k=0":   func() error { _, err := KMeans(ctx, x, 0, opt); return err },
		"k>n":   func() error { _, err := KMeans(ctx, x, 4, opt); return err },
		"empty": func() error { _, err := KMeans(ctx, mat32.Matrix{Cols: 2}, 1, opt); return err },
		"ragged": func() error {
			_, err := KMeans(ctx, mat32.Matrix{Rows: 3, Cols: 2, Data: x.Data[:5]}, 1, opt)
			return err
		},
		"zero dim": func() error { _, err := KMeans(ctx, mat32.Matrix{Rows: 3}, 1, opt); return err },
		"NaN": func() error {
			_, err := KMeans(ctx, mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{0, float32(math.NaN())}}, 1, opt)
			return err
		},
		"niter<0": func() error { o := opt; o.NIter = -1; _, err := KMeans(ctx, x, 1, o); return err },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: got %v, want ErrBadInput", name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := KMeans(cctx, x, 2, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// gaussianClasses returns Gaussian classes with the given number of points
// per class: class means N(0, scale²) (k/2 classes, unit noise) — the
// original benchmark data.
func gaussianClasses(n, d, classes int, scale float32) mat32.Matrix {
	rng := rand.New(rand.NewSource(1))
	centres := randMatrix(rng, max(classes, 1), d)
	data := make([]float32, n*d)
	for i := 0; i < n; i++ {
		c := centres.Row(rng.Intn(centres.Rows))
		for t := 0; t < d; t++ {
			data[i*d+t] = scale*c[t] + float32(rng.NormFloat64())
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}
}

// sphereClasses is SOP-like embedding data, as
// fixtures.GaussianSphere(classes, perClass, d, spread, rng) then
// L2-normalised rows: class means uniform on the unit sphere, per-dimension
// noise spread, perClass consecutive rows per class.
func sphereClasses(classes, perClass, d int, spread float64) mat32.Matrix {
	rng := rand.New(rand.NewSource(1))
	n := classes * perClass
	x := mat32.Matrix{Rows: n, Cols: d, Data: make([]float32, n*d)}
	mu := make([]float64, d)
	row := make([]float64, d)
	for c := 0; c < classes; c++ {
		unitMean(rng, mu)
		for p := 0; p < perClass; p++ {
			noisyUnitRow(rng, mu, row, spread, x.Row(c*perClass+p))
		}
	}
	return x
}

// unitMean sets mu to a direction uniform on the unit sphere (Gaussian
// draws, normalised).
func unitMean(rng *rand.Rand, mu []float64) {
	var s float64
	for t := range mu {
		mu[t] = rng.NormFloat64()
		s += mu[t] * mu[t]
	}
	s = math.Sqrt(s)
	for t := range mu {
		mu[t] /= s
	}
}

// noisyUnitRow writes mu plus Gaussian noise of standard deviation spread
// per coordinate, L2-normalised, to out (row is scratch of len(mu)).
func noisyUnitRow(rng *rand.Rand, mu, row []float64, spread float64, out []float32) {
	var q float64
	for t := range row {
		row[t] = mu[t] + spread*rng.NormFloat64()
		q += row[t] * row[t]
	}
	q = math.Sqrt(q)
	for t := range row {
		out[t] = float32(row[t] / q)
	}
}

// benchKMeans runs KMeans on x with k clusters as sub-benchmarks "pruned"
// (the Yinyang assignment) and "full" (full passes), so that the two are
// timed under the same machine load.
func benchKMeans(b *testing.B, x mat32.Matrix, k int) {
	for _, mode := range []string{"pruned", "full"} {
		b.Run(mode, func(b *testing.B) {
			opt := DefaultKMeansOptions()
			opt.fullPasses = mode == "full"
			b.ResetTimer()
			cpu0 := cpuSeconds()
			var res *KMeansResult
			for i := 0; i < b.N; i++ {
				var err error
				if res, err = KMeans(context.Background(), x, k, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// CPU seconds of the whole process per run: less sensitive than
			// wall time to other jobs on a shared machine.
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
			// Effective rate: the brute-force flop count over the time;
			// "work" is the fraction of brute-force (row, centroid) pairs
			// actually evaluated.
			n, d := float64(x.Rows), float64(x.Cols)
			brute := n * float64(k) * float64(opt.NIter+1)
			flop := 2 * brute * d * float64(b.N)
			b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "eff-Gflop/s")
			var evals int64
			skipped := make([]string, len(res.PairEvals))
			for p, e := range res.PairEvals {
				evals += e
				skipped[p] = fmt.Sprintf("%.3f", 1-float64(e)/(n*float64(k)))
			}
			b.ReportMetric(float64(evals)/brute, "work")
			// The result must be a fixed point of the last assignment: every
			// row assigned to a valid centroid, the objective finite.
			for i, a := range res.Assign {
				if a < 0 || int(a) >= k {
					b.Fatalf("row %d assigned to %d of %d", i, a, k)
				}
			}
			if math.IsNaN(res.Objective) || math.IsInf(res.Objective, 0) || res.Objective < 0 {
				b.Fatalf("objective %v", res.Objective)
			}
			if mode == "pruned" {
				b.Logf("share of distance evaluations skipped per pass: %v", skipped)
			}
		})
	}
}

func BenchmarkKMeans20000x128K500(b *testing.B) {
	benchKMeans(b, gaussianClasses(20000, 128, 250, 3), 500)
}

// BenchmarkKMeans20000x128K3740 has SOP's points-per-cluster ratio (≈ 5.3).
func BenchmarkKMeans20000x128K3740(b *testing.B) {
	benchKMeans(b, gaussianClasses(20000, 128, 1870, 3), 3740)
}

// BenchmarkKMeansSOP is Stanford Online Products scale: 60 500 test
// embeddings of 12 100 classes (5 per class, unit-normalised Gaussian
// classes as fixtures.GaussianSphere with spread 0.1), 128-D, K = 12 100,
// 20 iterations (≈ 3.9 Tflop brute force).
func BenchmarkKMeansSOP(b *testing.B) {
	if testing.Short() {
		b.Skip("SOP-scale k-means skipped in -short")
	}
	benchKMeans(b, sphereClasses(12100, 5, 128, 0.1), 12100)
}

func TestKMeansPruningIsExact(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	// Clustered data converges, so late iterations move few centroids.
	centres := randMatrix(rng, 30, 16)
	n, d := 3000, 16
	data := make([]float32, n*d)
	for i := 0; i < n; i++ {
		c := centres.Row(rng.Intn(30))
		for j := 0; j < d; j++ {
			data[i*d+j] = 4*c[j] + float32(rng.NormFloat64())
		}
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: data}
	for _, tc := range []struct{ k, maxPer int }{{40, 0}, {300, 0}, {40, 20}} {
		opt := DefaultKMeansOptions()
		opt.NIter = 30
		opt.MaxPointsPerCentroid = tc.maxPer
		pruned, err := KMeans(context.Background(), x, tc.k, opt)
		if err != nil {
			t.Fatal(err)
		}
		fullOpt := opt
		fullOpt.fullPasses = true
		full, err := KMeans(context.Background(), x, tc.k, fullOpt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(pruned.Assign, full.Assign) || !reflect.DeepEqual(pruned.Centroids.Data, full.Centroids.Data) ||
			!reflect.DeepEqual(pruned.History, full.History) || pruned.Objective != full.Objective {
			t.Fatalf("%+v: pruned run differs from full passes", tc)
		}
		if pruned.PartialRowSearches == 0 {
			t.Fatalf("%+v: pruning never engaged (%d full rows)", tc, pruned.FullRowSearches)
		}
		if full.PartialRowSearches != 0 {
			t.Fatal("noPrune run used partial searches")
		}
	}
}

// When subsampling leaves exactly k training rows (MaxPointsPerCentroid 1),
// faiss 1.7.3 copies the first k rows of its *input*, not of the sample:
// python3-faiss gives centroids (0, 1), (2, 3), (4, 5) for x = 0…19 as a
// 10 × 2 matrix, k = 3.
func TestKMeansSubsampleToKCopiesInput(t *testing.T) {
	x := mat32.Matrix{Rows: 10, Cols: 2, Data: make([]float32, 20)}
	for i := range x.Data {
		x.Data[i] = float32(i)
	}
	opt := DefaultKMeansOptions()
	opt.NIter, opt.MaxPointsPerCentroid = 5, 1
	res, err := KMeans(context.Background(), x, 3, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Centroids.Data, []float32{0, 1, 2, 3, 4, 5}) || res.Iterations != 0 || res.TrainPoints != 3 {
		t.Fatalf("centroids %v, iterations %d, train %d", res.Centroids.Data, res.Iterations, res.TrainPoints)
	}
}

// TestUpdateCentroidsThreads: the parallel update equals the serial
// reference (faiss's compute_centroids: row order, float32 sums, times
// float32(1/count); empty clusters zero) bit for bit, at any thread count.
func TestUpdateCentroidsThreads(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	n, d, k := 3001, 17, 700
	x := randMatrix(rng, n, d)
	assign := make([]int32, n)
	for i := range assign {
		assign[i] = int32(rng.Intn(k / 2)) // half the clusters empty
		if rng.Intn(10) == 0 {
			assign[i] = 3 // one large cluster
		}
	}
	want := make([]float32, k*d)
	wantCounts := make([]float32, k)
	for i, a := range assign {
		wantCounts[a]++
		for t, v := range x.Row(i) {
			want[int(a)*d+t] += v
		}
	}
	for j, h := range wantCounts {
		if h > 0 {
			norm := 1 / h
			for t := 0; t < d; t++ {
				want[j*d+t] *= norm
			}
		}
	}
	for _, threads := range []int{1, 2, 7} {
		cent := make([]float32, k*d)
		for i := range cent {
			cent[i] = 9 // overwritten
		}
		counts := make([]float32, k)
		updateCentroids(cent, counts, x, assign, threads)
		if !reflect.DeepEqual(bits32(cent), bits32(want)) || !reflect.DeepEqual(counts, wantCounts) {
			t.Fatalf("%d threads: centroids or counts differ from the serial update", threads)
		}
	}
}
