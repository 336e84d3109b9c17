package clustering

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// clusteredMatrix returns n points around c random centres (scale·N(0,1)
// centres, unit Gaussian noise), rows shuffled.
func clusteredMatrix(rng *rand.Rand, n, d, c int, scale float64) mat32.Matrix {
	centres := randMatrix(rng, c, d)
	data := make([]float32, n*d)
	for i := 0; i < n; i++ {
		cr := centres.Row(rng.Intn(c))
		for t := 0; t < d; t++ {
			data[i*d+t] = float32(scale*float64(cr[t]) + rng.NormFloat64())
		}
	}
	return mat32.Matrix{Rows: n, Cols: d, Data: data}
}

// kmeansBothWays runs KMeans pruned and with full passes and fails unless
// assignments, centroids, objective, history and splits are bit-identical.
func kmeansBothWays(t *testing.T, name string, x mat32.Matrix, k int, opt KMeansOptions) (pruned, full *KMeansResult) {
	t.Helper()
	pruned, err := KMeans(context.Background(), x, k, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fullOpt := opt
	fullOpt.fullPasses = true
	full, err = KMeans(context.Background(), x, k, fullOpt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(pruned.Assign, full.Assign) {
		n := 0
		for i := range pruned.Assign {
			if pruned.Assign[i] != full.Assign[i] {
				n++
			}
		}
		t.Fatalf("%s: %d assignments differ from full passes", name, n)
	}
	if !reflect.DeepEqual(pruned.Centroids.Data, full.Centroids.Data) || !reflect.DeepEqual(pruned.History, full.History) ||
		pruned.Objective != full.Objective || pruned.Splits != full.Splits || pruned.Iterations != full.Iterations {
		t.Fatalf("%s: pruned run differs from full passes (objective %v vs %v, splits %d vs %d)",
			name, pruned.Objective, full.Objective, pruned.Splits, full.Splits)
	}
	return pruned, full
}

// TestKMeansYinyangExact compares the pruned assignment with full passes on
// data that stresses it: random, clustered, duplicate-heavy (many equal
// rows, hence equal centroids and exact ties), tie-heavy (small integer
// grids: many exactly equal distances), and offset data (a large common
// offset makes the float32 norm expansion lose most digits, so argmins are
// decided by rounding and the safety margin is what keeps pruning exact);
// several seeds and k from 1 to n−1, with the default group size and with
// tiny groups (many groups per k).
func TestKMeansYinyangExact(t *testing.T) {
	t.Parallel() // the group size is an option, not a package variable
	rng := rand.New(rand.NewSource(21))
	type dataset struct {
		name string
		x    mat32.Matrix
	}
	var sets []dataset
	sets = append(sets, dataset{"random", randMatrix(rng, 600, 13)})
	sets = append(sets, dataset{"clustered", clusteredMatrix(rng, 700, 16, 25, 4)})
	{
		base := clusteredMatrix(rng, 40, 8, 6, 3)
		x := mat32.Matrix{Rows: 500, Cols: 8, Data: make([]float32, 500*8)}
		for i := 0; i < x.Rows; i++ {
			copy(x.Row(i), base.Row(rng.Intn(base.Rows)))
		}
		sets = append(sets, dataset{"duplicates", x})
	}
	{
		x := mat32.Matrix{Rows: 500, Cols: 3, Data: make([]float32, 500*3)}
		for i := range x.Data {
			x.Data[i] = float32(rng.Intn(4))
		}
		sets = append(sets, dataset{"ties", x})
	}
	for _, off := range []float32{10, 300} {
		x := clusteredMatrix(rng, 500, 12, 20, 0.3)
		for i := range x.Data {
			x.Data[i] = off + 0.05*x.Data[i]
		}
		sets = append(sets, dataset{fmt.Sprintf("offset%v", off), x})
	}
	for _, gs := range []int{16, 48} {
		for _, ds := range sets {
			n := ds.x.Rows
			for _, k := range []int{1, 5, 37, 120, n / 2, n - 3, n - 1} {
				for _, seed := range []int64{1, 2, 3} {
					opt := DefaultKMeansOptions()
					opt.Seed = seed
					opt.NIter = 12
					opt.groupSize = gs
					name := fmt.Sprintf("group size %d, %s, k=%d, seed %d", gs, ds.name, k, seed)
					kmeansBothWays(t, name, ds.x, k, opt)
				}
			}
		}
	}
}

// TestKMeansYinyangKernels repeats the comparison with the kernels of every
// level (each level's argmin and bounds kernels must round alike).
func TestKMeansYinyangKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	x := clusteredMatrix(rng, 400, 21, 15, 3)
	forEachLevel(t, func(t *testing.T) {
		for _, k := range []int{9, 60, 399} {
			opt := DefaultKMeansOptions()
			opt.Seed = int64(k)
			opt.groupSize = 4
			kmeansBothWays(t, fmt.Sprintf("%s k=%d", KernelName(), k), x, k, opt)
		}
	})
}

// TestKMeansYinyangSubsampled: the training passes are pruned, the final
// pass over all rows is a full one.
func TestKMeansYinyangSubsampled(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	x := clusteredMatrix(rng, 3000, 10, 40, 3)
	opt := DefaultKMeansOptions()
	opt.MaxPointsPerCentroid = 20
	p, _ := kmeansBothWays(t, "subsampled", x, 100, opt)
	if len(p.PairEvals) != opt.NIter+1 || p.PairEvals[opt.NIter] != 3000*100 {
		t.Fatalf("pair evaluations %v", p.PairEvals)
	}
}

// TestKMeansYinyangSkipsWork: on clustered data the pruned passes evaluate
// a small share of the n·k distances, and the counts do not depend on the
// thread count.
func TestKMeansYinyangSkipsWork(t *testing.T) {
	rng := rand.New(rand.NewSource(24))
	n, k := 4000, 200
	x := clusteredMatrix(rng, n, 16, 200, 3)
	opt := DefaultKMeansOptions()
	opt.Threads = 1
	p, full := kmeansBothWays(t, "clustered", x, k, opt)
	if len(p.PairEvals) != opt.NIter+1 || p.PairEvals[0] != int64(n*k) {
		t.Fatalf("pair evaluations %v", p.PairEvals)
	}
	var total int64
	for _, e := range p.PairEvals {
		total += e
	}
	brute := int64(n*k) * int64(opt.NIter+1)
	t.Logf("evaluated %.3f of the brute-force pairs; per pass %v", float64(total)/float64(brute), p.PairEvals)
	// With k = 200 there are 4 groups of 64 centroids (the last of 8),
	// and every row evaluates at least its home group's unskipped panels.
	if 3*total > brute {
		t.Fatalf("pruning evaluated %d of %d pairs (> 1/3)", total, brute)
	}
	if late := p.PairEvals[opt.NIter]; 8*late > int64(n*k) {
		t.Fatalf("final pass evaluated %d of %d pairs (> 1/8)", late, n*k)
	}
	if full.PairEvals[opt.NIter] != int64(n*k) {
		t.Fatalf("full passes: %v", full.PairEvals)
	}
	opt.Threads = 2
	q, err := KMeans(context.Background(), x, k, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.PairEvals, q.PairEvals) || !reflect.DeepEqual(p.Assign, q.Assign) {
		t.Fatal("thread count changed the pruned run")
	}
}

// TestYinyangHelpers checks the vector helpers against their portable
// versions (lexicographic lane reduction with ties, bound masks, decay).
func TestYinyangHelpers(t *testing.T) {
	forEachLevel(t, testYinyangHelpers)
}

func testYinyangHelpers(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	best := make([]float32, tileRows*tileCols)
	bidx := make([]int32, tileRows*tileCols)
	for it := 0; it < 2000; it++ {
		for i := range best {
			best[i] = float32(rng.Intn(4)) // many ties
			bidx[i] = int32(rng.Intn(50))
			if rng.Intn(9) == 0 {
				best[i] = float32(math.Inf(1))
			}
		}
		var v1, v2 [tileRows]float32
		var i1, i2 [tileRows]int32
		groupArgmin(best, bidx, &v1, &i1)
		groupArgminGeneric(best, bidx, &v2, &i2)
		if v1 != v2 || i1 != i2 {
			t.Fatalf("groupArgmin %v %v, generic %v %v", v1, i1, v2, i2)
		}
	}
	lb := make([]float32, 203)
	delta := make([]float32, 203)
	for i := range lb {
		lb[i] = float32(rng.Float64() * 3)
		delta[i] = float32(rng.Float64())
	}
	lb[7] = float32(math.Inf(1))
	m1, m2 := make([]uint64, 4), make([]uint64, 4)
	lbMask(lb, 1.5, m1)
	lbMaskGeneric(lb, 1.5, m2)
	if !reflect.DeepEqual(m1, m2) {
		t.Fatalf("lbMask %x, generic %x", m1, m2)
	}
	d1, d2 := make([]float32, 203), make([]float32, 203)
	lbDecay(d1, lb, delta)
	lbDecayGeneric(d2, lb, delta)
	for i := range d1 {
		if !(d1[i] == d2[i]) || !(float64(d1[i]) <= math.Max(0, float64(lb[i])-float64(delta[i]))) {
			t.Fatalf("lbDecay[%d] = %v / %v for %v − %v", i, d1[i], d2[i], lb[i], delta[i])
		}
	}
}

// TestExpandTileRows checks the pruned pass's tile expansion against
// expandRow, the layout every bounds kernel reads.
func TestExpandTileRows(t *testing.T) {
	for _, d := range []int{1, 3, 16, 37} {
		var x [tileRows][]float32
		want := make([]float32, tileRows*lanes*d)
		for r := range x {
			x[r] = make([]float32, d)
			for j := range x[r] {
				x[r][j] = float32(r*1000+j) + 0.25
			}
			expandRow(want[r*lanes:], x[r])
		}
		got := make([]float32, tileRows*lanes*d+packPad)
		expandTileRows(got, &x, d)
		if !reflect.DeepEqual(got[:len(want)], want) {
			t.Fatalf("d=%d: expanded tile differs from expandRow's layout", d)
		}
	}
}
