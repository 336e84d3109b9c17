package clustering

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

var ctx = context.Background()

func mat1(vals ...float32) mat32.Matrix {
	return mat32.Matrix{Rows: len(vals), Cols: 1, Data: vals}
}

func mustCluster(t *testing.T, name string, p Params, x mat32.Matrix) []int32 {
	t.Helper()
	c, err := New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Cluster(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != x.Rows {
		t.Fatalf("%s: %d labels for %d rows", name, len(l), x.Rows)
	}
	return l
}

func fourBlobs(seed int64, m int) (mat32.Matrix, []int) {
	return blobs(rand.New(rand.NewSource(seed)), [][]float32{{0, 0, 0}, {20, 0, 0}, {0, 20, 0}, {0, 0, 20}}, m)
}

// naiveWard merges, greedily, the pair with the smallest increase of the
// within-cluster sum of squares n_a·n_b/(n_a+n_b)·‖c_a − c_b‖² until k
// clusters remain (the textbook definition, O(N³·D)).
func naiveWard(x mat32.Matrix, k int) []int {
	type cl struct {
		members []int
		sum     []float64
	}
	var cs []*cl
	for i := 0; i < x.Rows; i++ {
		c := &cl{members: []int{i}, sum: make([]float64, x.Cols)}
		for t, v := range x.Row(i) {
			c.sum[t] = float64(v)
		}
		cs = append(cs, c)
	}
	for len(cs) > k {
		ba, bb, bc := 0, 1, math.Inf(1)
		for a := range cs {
			for b := a + 1; b < len(cs); b++ {
				na, nb := float64(len(cs[a].members)), float64(len(cs[b].members))
				var d2 float64
				for t := range cs[a].sum {
					e := cs[a].sum[t]/na - cs[b].sum[t]/nb
					d2 += e * e
				}
				if c := na * nb / (na + nb) * d2; c < bc {
					ba, bb, bc = a, b, c
				}
			}
		}
		cs[ba].members = append(cs[ba].members, cs[bb].members...)
		for t := range cs[ba].sum {
			cs[ba].sum[t] += cs[bb].sum[t]
		}
		cs = append(cs[:bb], cs[bb+1:]...)
	}
	lab := make([]int, x.Rows)
	for c, cl := range cs {
		for _, i := range cl.members {
			lab[i] = c
		}
	}
	return lab
}

func TestWardHandExample(t *testing.T) {
	// Merges: {0,1} and {5,6} (ΔSSE ½ each), then {0,1}∪{5,6} (ΔSSE
	// 2·2/4·5² = 25) before {5,6}∪{20} (2/3·14.5² ≈ 140).
	x := mat1(0, 20, 1, 5, 6)
	p := DefaultParams()
	for k, want := range map[int][]int32{
		1: {0, 0, 0, 0, 0},
		2: {0, 1, 0, 0, 0},
		3: {0, 1, 0, 2, 2},
		5: {0, 1, 2, 3, 4},
	} {
		p.K = k
		if got := mustCluster(t, "ward", p, x); !reflect.DeepEqual(got, want) {
			t.Errorf("K=%d: got %v want %v", k, got, want)
		}
	}
}

func TestWardMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	x := randMatrix(rng, 40, 3)
	p := DefaultParams()
	for k := 1; k <= 40; k += 3 {
		p.K = k
		got := mustCluster(t, "ward", p, x)
		if want := naiveWard(x, k); !samePartition(got, want) {
			t.Fatalf("K=%d: NN-chain %v, greedy %v", k, got, want)
		}
	}
}

func TestWardLimit(t *testing.T) {
	p := DefaultParams()
	p.K, p.MaxWardPoints = 2, 10
	c, _ := NewWard(p)
	_, err := c.Cluster(ctx, randMatrix(rand.New(rand.NewSource(1)), 11, 2))
	if !errors.Is(err, ErrBadInput) {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestSpectralRecoversBlobs(t *testing.T) {
	x, lab := fourBlobs(3, 25)
	p := DefaultParams()
	p.K, p.SpectralNeighbors = 4, 6
	for _, dense := range []int{1000, 0} { // dense solver, then subspace iteration
		p.SpectralDenseLimit = dense
		if got := mustCluster(t, "spectral", p, x); !samePartition(got, lab) {
			t.Fatalf("dense limit %d: blobs not recovered: %v", dense, got)
		}
	}
}

func TestSpectralEigenSolversAgree(t *testing.T) {
	// One connected cloud: compare the subspace-iteration eigenvectors with
	// the dense decomposition through the eigenvalues of their Rayleigh
	// quotients and the residuals.
	x := randMatrix(rand.New(rand.NewSource(4)), 120, 2)
	p := DefaultParams()
	p.K, p.SpectralNeighbors = 5, 8
	s, _ := NewSpectral(p)
	m, _, err := s.affinity(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	k := 5
	ud, err := denseLeadingEigvecs(m, k)
	if err != nil {
		t.Fatal(err)
	}
	us, err := subspaceLeadingEigvecs(ctx, m, k, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	rq := func(u []float64, c int) (float64, float64) {
		n := m.n
		v := make([]float64, n)
		mv := make([]float64, n)
		for i := 0; i < n; i++ {
			v[i] = u[i*k+c]
		}
		m.mulBlock(v, mv, 1)
		var num, den float64
		for i := range v {
			num += v[i] * mv[i]
			den += v[i] * v[i]
		}
		lam := num / den
		var r float64
		for i := range v {
			e := mv[i] - lam*v[i]
			r += e * e
		}
		return lam, math.Sqrt(r)
	}
	for c := 0; c < k; c++ {
		ld, rd := rq(ud, c)
		ls, rs := rq(us, c)
		if math.Abs(ld-ls) > 1e-8 || rd > 1e-8 || rs > 1e-5 {
			t.Fatalf("eigenpair %d: dense λ=%v (res %g), subspace λ=%v (res %g)", c, ld, rd, ls, rs)
		}
	}
	if l0, _ := rq(ud, 0); math.Abs(l0-1) > 1e-10 {
		t.Fatalf("leading eigenvalue of a connected normalised affinity must be 1, got %v", l0)
	}
}

func TestBirchTreeAndBlobs(t *testing.T) {
	x, lab := fourBlobs(5, 40)
	p := DefaultParams()
	p.K, p.BirchThreshold, p.BirchBranching = 4, 0.6, 3 // tiny branching forces many splits
	if got := mustCluster(t, "birch", p, x); !samePartition(got, lab) {
		t.Fatalf("blobs not recovered: %v", got)
	}
	// Tree invariants: every point in exactly one leaf subcluster, every
	// subcluster within the threshold, every node within the branching factor.
	tr := &cfTree{root: &cfNode{leaf: true}, threshold: 0.6, branching: 3, d: 3}
	for i := 0; i < x.Rows; i++ {
		e := &cfEntry{n: 1, ls: make([]float64, 3)}
		for j, v := range x.Row(i) {
			e.ls[j] = float64(v)
			e.ss += float64(v) * float64(v)
		}
		if tr.insert(tr.root, e) {
			a, b := tr.split(tr.root)
			tr.root = &cfNode{entries: []*cfEntry{a, b}}
		}
	}
	var total float64
	for _, e := range tr.leaves(tr.root, nil) {
		total += e.n
		c := e.centroid(make([]float64, 3))
		var c2 float64
		for _, v := range c {
			c2 += v * v
		}
		if r2 := e.ss/e.n - c2; r2 > 0.36+1e-9 {
			t.Fatalf("subcluster radius² %v above threshold²", r2)
		}
	}
	if total != float64(x.Rows) {
		t.Fatalf("leaves hold %v points, want %d", total, x.Rows)
	}
	var walk func(*cfNode)
	walk = func(nd *cfNode) {
		if len(nd.entries) > 3 {
			t.Fatalf("node with %d entries", len(nd.entries))
		}
		for _, e := range nd.entries {
			if e.child != nil {
				walk(e.child)
			}
		}
	}
	walk(tr.root)
}

func TestBirchHandExample(t *testing.T) {
	// Threshold 0.5: subclusters {0, .1, .2}, {5, 5.1}, {10}; K = 3 equals
	// the number of subclusters, so each is a cluster.
	x := mat1(0, 5, 0.1, 10, 0.2, 5.1)
	p := DefaultParams()
	p.K, p.BirchThreshold = 3, 0.5
	want := []int32{0, 1, 0, 2, 0, 1}
	if got := mustCluster(t, "birch", p, x); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// naiveDBSCAN is the textbook definition with an O(N²) neighbour scan.
func naiveDBSCAN(x mat32.Matrix, eps float64, minPts int) []int32 {
	n := x.Rows
	nb := make([][]int, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if math.Sqrt(sqDist64(x.Row(i), x.Row(j))) <= eps {
				nb[i] = append(nb[i], j)
			}
		}
	}
	lab := make([]int32, n)
	for i := range lab {
		lab[i] = -2 // unvisited
	}
	c := int32(0)
	for i := 0; i < n; i++ {
		if lab[i] != -2 || len(nb[i]) < minPts {
			continue
		}
		queue := []int{i}
		lab[i] = c
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if len(nb[p]) < minPts {
				continue
			}
			for _, q := range nb[p] {
				if lab[q] == -2 {
					lab[q] = c
					queue = append(queue, q)
				}
			}
		}
		c++
	}
	for i := range lab {
		if lab[i] == -2 {
			lab[i] = Noise
		}
	}
	return relabel(lab)
}

func TestDBSCANHandExample(t *testing.T) {
	// eps 0.9, min samples 3. A = {0,.5,1,1.5,2}: 0 and 2 are border points
	// (balls of 2), the rest core. B = {10,10.2,10.4}: all core. 5: noise.
	x := mat1(10, 0, 5, 1.5, 10.2, 0.5, 2, 1, 10.4)
	p := DefaultParams()
	p.MinSamples = 3
	want := []int32{0, 1, Noise, 1, 0, 1, 1, 1, 0}
	if got := mustCluster(t, "dbscan", p, x); !reflect.DeepEqual(got, want) {
		t.Fatalf("dbscan: got %v want %v", got, want)
	}
	if got := mustCluster(t, "optics", p, x); !reflect.DeepEqual(got, want) {
		t.Fatalf("optics: got %v want %v", got, want)
	}
}

func TestDBSCANMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	x := randMatrix(rng, 400, 2) // unit Gaussian: dense core, sparse rim
	p := DefaultParams()
	for _, eps := range []float64{0.15, 0.3, 0.9} {
		p.Eps = eps
		got := mustCluster(t, "dbscan", p, x)
		want := naiveDBSCAN(x, eps, p.MinSamples)
		// Border points reachable from two clusters may differ by visiting
		// order; compare core points and the noise set exactly.
		nb, _ := radiusNeighbors(ctx, x, eps, 1)
		for i := range got {
			if (got[i] == Noise) != (want[i] == Noise) {
				t.Fatalf("eps %v row %d: noise mismatch", eps, i)
			}
		}
		var coreG []int32
		var coreW []int
		for i := range got {
			if len(nb[i]) >= p.MinSamples {
				coreG = append(coreG, got[i])
				coreW = append(coreW, int(want[i]))
			}
		}
		if !samePartition(coreG, coreW) {
			t.Fatalf("eps %v: core partition differs", eps)
		}
	}
}

func TestRadiusNeighborsExact(t *testing.T) {
	// Grid of spacing 0.5: neighbours at exactly eps = 0.5 must be included.
	var data []float32
	for i := 0; i < 9; i++ {
		for j := 0; j < 9; j++ {
			data = append(data, float32(i)*0.5+100, float32(j)*0.5-40)
		}
	}
	x := mat32.Matrix{Rows: 81, Cols: 2, Data: data}
	for _, th := range []int{1, 3} {
		nb, err := radiusNeighbors(ctx, x, 0.5, th)
		if err != nil {
			t.Fatal(err)
		}
		for i := range nb {
			var want []int32
			for j := 0; j < 81; j++ {
				if sqDist64(x.Row(i), x.Row(j)) <= 0.25 {
					want = append(want, int32(j))
				}
			}
			if !reflect.DeepEqual(nb[i], want) {
				t.Fatalf("row %d: %v want %v", i, nb[i], want)
			}
			gi, gj := i/9, i%9
			cnt := 1
			for _, ok := range []bool{gi > 0, gi < 8, gj > 0, gj < 8} {
				if ok {
					cnt++
				}
			}
			if len(nb[i]) != cnt {
				t.Fatalf("row %d: %d neighbours, want %d", i, len(nb[i]), cnt)
			}
		}
	}
}

func TestOPTICSHandReachability(t *testing.T) {
	// Points 0, 1, 3 with min samples 2: core = (1, 1, 2); ordering 0, 1, 2
	// with reachability (∞, max(1,1) = 1, max(|3−1|, 1) = 2).
	p := DefaultParams()
	p.MinSamples = 2
	o, _ := NewOPTICS(p)
	r, err := o.Order(ctx, mat1(0, 1, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Ordering, []int32{0, 1, 2}) || !reflect.DeepEqual(r.CoreDistance, []float64{1, 1, 2}) ||
		!math.IsInf(r.Reachability[0], 1) || r.Reachability[1] != 1 || r.Reachability[2] != 2 ||
		!reflect.DeepEqual(r.Predecessor, []int32{-1, 0, 1}) {
		t.Fatalf("got %+v", r)
	}
	if got := r.ExtractDBSCAN(1.5); !reflect.DeepEqual(got, []int32{0, 0, Noise}) {
		t.Fatalf("extract 1.5: %v", got)
	}
	if got := r.ExtractDBSCAN(2); !reflect.DeepEqual(got, []int32{0, 0, 0}) {
		t.Fatalf("extract 2: %v", got)
	}
	if got := r.ExtractDBSCAN(0.5); !reflect.DeepEqual(got, []int32{Noise, Noise, Noise}) {
		t.Fatalf("extract 0.5: %v", got)
	}
}

func TestOPTICSAgreesWithDBSCANOnCores(t *testing.T) {
	x := randMatrix(rand.New(rand.NewSource(8)), 300, 2)
	p := DefaultParams()
	p.Eps = 0.25
	d := mustCluster(t, "dbscan", p, x)
	o := mustCluster(t, "optics", p, x)
	nb, _ := radiusNeighbors(ctx, x, p.Eps, 1)
	var cd, co []int32
	for i := range d {
		if len(nb[i]) >= p.MinSamples {
			cd = append(cd, d[i])
			co = append(co, o[i])
		}
	}
	ci := make([]int, len(co))
	for i, v := range co {
		ci[i] = int(v)
	}
	if !samePartition(cd, ci) {
		t.Fatal("OPTICS eps extraction and DBSCAN differ on core points")
	}
}

func TestKMeansClustererAndRegistry(t *testing.T) {
	names := Names()
	want := []string{"birch", "dbscan", "kmeans", "optics", "spectral", "ward"}
	if !reflect.DeepEqual(names, want) || !sort.StringsAreSorted(names) {
		t.Fatalf("names %v", names)
	}
	if _, err := New("hdbscan", DefaultParams()); !errors.Is(err, ErrBadInput) {
		t.Fatal("unknown name accepted")
	}
	x, lab := fourBlobs(9, 10)
	p := DefaultParams()
	p.K = 4
	got := mustCluster(t, "KMeans", p, x) // case-insensitive
	if got[0] != 0 {
		t.Fatal("labels not numbered by first appearance")
	}
	_ = lab
	for _, name := range []string{"kmeans", "ward", "spectral", "birch"} {
		p := DefaultParams()
		p.K = 0
		if _, err := New(name, p); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s accepted K = 0", name)
		}
		p.K = 50
		c, _ := New(name, p)
		if _, err := c.Cluster(ctx, x); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s accepted K > N", name)
		}
		if _, err := c.Cluster(ctx, mat32.Matrix{Rows: 2, Cols: 1, Data: []float32{0, float32(math.NaN())}}); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s accepted NaN", name)
		}
	}
	for _, name := range []string{"dbscan", "optics"} {
		p := DefaultParams()
		p.Eps = 0
		if _, err := New(name, p); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s accepted eps = 0", name)
		}
		p = DefaultParams()
		p.MinSamples = 0
		if _, err := New(name, p); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s accepted min samples = 0", name)
		}
	}
	if got := NoiseAsSingletons([]int32{0, Noise, 1, Noise}); !reflect.DeepEqual(got, []int32{0, 2, 1, 3}) {
		t.Fatalf("NoiseAsSingletons: %v", got)
	}
}

func TestClusterersDeterministic(t *testing.T) {
	x, _ := fourBlobs(10, 30)
	for _, name := range Names() {
		p := DefaultParams()
		p.K, p.Eps = 6, 1.0
		a := mustCluster(t, name, p, x)
		p.Threads = 1
		b := mustCluster(t, name, p, x)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: result depends on the run/threads", name)
		}
	}
}

func benchClusterer(b *testing.B, name string) {
	rng := rand.New(rand.NewSource(1))
	n, d, classes := 3000, 32, 30
	centres := randMatrix(rng, classes, d)
	data := make([]float32, n*d)
	for i := 0; i < n; i++ {
		c := centres.Row(i % classes)
		for t := 0; t < d; t++ {
			data[i*d+t] = 2*c[t] + 0.15*float32(rng.NormFloat64())
		}
	}
	x := mat32.Matrix{Rows: n, Cols: d, Data: data}
	p := DefaultParams()
	p.K = classes
	c, err := New(name, p)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var labels []int32
	for i := 0; i < b.N; i++ {
		if labels, err = c.Cluster(ctx, x); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	distinct := map[int32]bool{}
	for _, l := range labels {
		distinct[l] = true
	}
	if len(labels) != n || len(distinct) < 2 {
		b.Fatalf("%d labels, %d distinct, for %d rows", len(labels), len(distinct), n)
	}
}

func BenchmarkClusterKMeans3000(b *testing.B)   { benchClusterer(b, "kmeans") }
func BenchmarkClusterWard3000(b *testing.B)     { benchClusterer(b, "ward") }
func BenchmarkClusterSpectral3000(b *testing.B) { benchClusterer(b, "spectral") }
func BenchmarkClusterBirch3000(b *testing.B)    { benchClusterer(b, "birch") }
func BenchmarkClusterDBSCAN3000(b *testing.B)   { benchClusterer(b, "dbscan") }
func BenchmarkClusterOPTICS3000(b *testing.B)   { benchClusterer(b, "optics") }
