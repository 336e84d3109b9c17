package metrics

import (
	"context"
	"math"
	"math/big"
	"math/rand"
	"slices"
	"testing"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// exactKeys are the retrieval metrics compared with the exact reference.
var exactKeys = []string{"R@1", "R@4", "P@10", "MAP@R", "MRR", "mAP@1000"}

// fixedInt returns f·2¹⁴⁹, an integer for every float32.
func fixedInt(f float32) *big.Int {
	z, acc := new(big.Float).SetMantExp(new(big.Float).SetFloat64(float64(f)), 149).Int(nil)
	if acc != big.Exact {
		panic("float32 not an integer times 2^-149")
	}
	return z
}

// exactRanking returns, for query row x, the gallery indices ordered by the
// exact distance of the float32 rows (squared L2, or cosine when cos),
// ties to the lower index; skip is left out (−1: none). All arithmetic is
// on integers.
func exactRanking(x []float32, g mat32.Matrix, skip int, cos bool) []int {
	X := make([]*big.Int, len(x))
	for t, v := range x {
		X[t] = fixedInt(v)
	}
	type cand struct {
		id      int
		d, p, n *big.Int // L2: d; cosine: p = ⟨x, c⟩, n = ‖c‖²
	}
	var cs []cand
	for j := 0; j < g.Rows; j++ {
		if j == skip {
			continue
		}
		c := cand{id: j, d: new(big.Int), p: new(big.Int), n: new(big.Int)}
		for t, v := range g.Row(j) {
			C := fixedInt(v)
			diff := new(big.Int).Sub(X[t], C)
			c.d.Add(c.d, diff.Mul(diff, diff))
			c.p.Add(c.p, new(big.Int).Mul(X[t], C))
			c.n.Add(c.n, new(big.Int).Mul(C, C))
		}
		cs = append(cs, c)
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if !cos {
			return a.d.Cmp(b.d)
		}
		// cos(x,a) > cos(x,b) ⇔ p_a·|p_a|·n_b > p_b·|p_b|·n_a
		l := new(big.Int).Mul(a.p, new(big.Int).Abs(a.p))
		l.Mul(l, b.n)
		r := new(big.Int).Mul(b.p, new(big.Int).Abs(b.p))
		r.Mul(r, a.n)
		return r.Cmp(l)
	})
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.id
	}
	return out
}

// exactMetrics scores strict's exactKeys from the exact rankings; every
// query must have a positive in the gallery.
func exactMetrics(t *testing.T, in Input, cos bool) map[string]float64 {
	g, gl, loo := in.Emb, in.Labels, in.Gallery == nil
	if !loo {
		g, gl = *in.Gallery, in.GalleryLabels
	}
	sums := map[string]float64{}
	for i := 0; i < in.Emb.Rows; i++ {
		skip := -1
		if loo {
			skip = i
		}
		order := exactRanking(in.Emb.Row(i), g, skip, cos)
		R := 0
		for j, l := range gl {
			if l == in.Labels[i] && j != skip {
				R++
			}
		}
		if R == 0 {
			t.Fatalf("query %d has no positive", i)
		}
		hits, ap, ap1000, first := 0, 0.0, 0.0, 0
		for p, j := range order {
			if gl[j] != in.Labels[i] {
				continue
			}
			hits++
			if first == 0 {
				first = p + 1
			}
			if p < R {
				ap += float64(hits) / float64(p+1)
			}
			if p < 1000 {
				ap1000 += float64(hits) / float64(p+1)
			}
			if p < 4 {
				sums["R@4"] += b2f(hits == 1)
			}
			if p < 1 {
				sums["R@1"]++
			}
			if p < 10 {
				sums["P@10"] += 0.1
			}
		}
		sums["MAP@R"] += ap / float64(R)
		sums["mAP@1000"] += ap1000 / float64(min(R, 1000, len(order)))
		sums["MRR"] += 1 / float64(first)
	}
	for k := range sums {
		sums[k] /= float64(in.Emb.Rows)
	}
	return sums
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// checkExact evaluates in under strict and compares exactKeys with the
// exact reference.
func checkExact(t *testing.T, name string, in Input, distance string, keys ...string) {
	t.Helper()
	checkExactWith(t, name, in, Options{Distance: distance}, keys...)
}

// checkExactWith is checkExact with other options (strict, keys set).
func checkExactWith(t *testing.T, name string, in Input, opt Options, keys ...string) {
	t.Helper()
	if keys == nil {
		keys = exactKeys
	}
	distance := opt.Distance
	opt.Convention, opt.Metrics = Strict, keys
	res, err := Evaluate(context.Background(), in, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want := exactMetrics(t, in, distance == "cosine")
	for _, k := range keys {
		if got := res.Metrics[k]; math.Abs(got-want[k]) > 1e-12 {
			t.Errorf("%s: %s = %.15g, exact %.15g", name, k, got, want[k])
		}
	}
}

// tieInputs are sets whose exact distances tie or nearly tie where
// float64 sums in index order do not (see TestStrictExactNearTies).
func tieInputs() map[string]Input {
	out := map[string]Input{}
	// The origin against (t,t,t,1) of its class and (1,t,t,t) of another,
	// t = 2⁻²⁷: exactly as far, index-order float64 sums 1 + 2⁻⁵² and 1.
	// Filler pairs far away give every row a positive.
	tt := float32(0x1p-27)
	rows := [][]float32{{0, 0, 0, 0}, {tt, tt, tt, 1}, {1, tt, tt, tt}, {1, 0.5, 0, 0}}
	labels := []int32{0, 0, 1, 1}
	for c := 0; c < 20; c++ {
		base := float32(10 + 3*c)
		rows = append(rows, []float32{base, 0, base, 0}, []float32{base, 0.25, base, 0})
		labels = append(labels, int32(2+c), int32(2+c))
	}
	out["origin t,t,t,1"] = Input{Emb: fromRows(rows), Labels: labels}

	// Query/gallery: query i at (0, C·e_i) against v_i and its reversed
	// copy, both at (·, C·e_i): exactly as far; the query's class is v_i's
	// for even i, the copy's for odd i.
	rng := rand.New(rand.NewSource(5))
	const pairs, d = 60, 16
	q := mat32.Matrix{Rows: pairs, Cols: d + pairs, Data: make([]float32, pairs*(d+pairs))}
	g := mat32.Matrix{Rows: 2 * pairs, Cols: d + pairs, Data: make([]float32, 2*pairs*(d+pairs))}
	ql := make([]int32, pairs)
	gl := make([]int32, 2*pairs)
	for i := 0; i < pairs; i++ {
		q.Row(i)[d+i] = 4
		a, b := g.Row(2*i), g.Row(2*i+1)
		for k := 0; k < d; k++ {
			a[k] = float32(rng.NormFloat64())
		}
		for k := 0; k < d; k++ {
			b[k] = a[d-1-k]
		}
		a[d+i], b[d+i] = 4, 4
		gl[2*i], gl[2*i+1] = int32(2*i), int32(2*i+1)
		ql[i] = int32(2*i + i%2)
	}
	out["reversed copies"] = Input{Emb: q, Labels: ql, Gallery: &g, GalleryLabels: gl}

	// Classes of rows of size 1e-19 next to classes of unit rows.
	const n, dt, classes = 120, 8, 12
	x := mat32.Matrix{Rows: n, Cols: dt, Data: make([]float32, n*dt)}
	xl := make([]int32, n)
	centres := make([]float64, classes*dt)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	for i := 0; i < n; i++ {
		c := i % classes
		scale := 1.0
		if c%2 == 0 {
			scale = 1e-19
		}
		for k := 0; k < dt; k++ {
			x.Row(i)[k] = float32(scale * (centres[c*dt+k] + 0.6*rng.NormFloat64()))
		}
		xl[i] = int32(c)
	}
	out["1e-19 next to unit"] = Input{Emb: x, Labels: xl}
	return out
}

func fromRows(rows [][]float32) mat32.Matrix {
	m := mat32.Matrix{Rows: len(rows), Cols: len(rows[0])}
	for _, r := range rows {
		m.Data = append(m.Data, r...)
	}
	return m
}

// TestStrictExactNearTies: strict's retrieval metrics equal those of the
// exact ranking (integer arithmetic) where distances tie exactly or nearly
// and float64 sums in index order would decide them otherwise. Run under
// every kernel level by make test-kernels.
func TestStrictExactNearTies(t *testing.T) {
	t.Parallel()
	for name, in := range tieInputs() {
		checkExact(t, name, in, "")
	}
}

// cosineInputs are sets whose cosines tie within the rounding of a
// float32 normalisation: v, 3v, 5v, 7v rounded to float32 (classes
// alternate), and rows 1 ulp apart in one coordinate.
func cosineInputs() map[string]Input {
	rng := rand.New(rand.NewSource(8))
	const bases, d = 20, 12
	mult := mat32.Matrix{Rows: 4 * bases, Cols: d, Data: make([]float32, 4*bases*d)}
	ml := make([]int32, 4*bases)
	for b := 0; b < bases; b++ {
		v := make([]float64, d)
		for k := range v {
			v[k] = rng.NormFloat64()
		}
		for m := 0; m < 4; m++ {
			for k := range v {
				mult.Row(4*b + m)[k] = float32(float64(2*m+1) * float64(float32(v[k])))
			}
			ml[4*b+m] = int32(2*b + m%2)
		}
	}
	ulp := mat32.Matrix{Rows: 4 * bases, Cols: d, Data: make([]float32, 4*bases*d)}
	ul := make([]int32, 4*bases)
	for b := 0; b < bases; b++ {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
		for m := 0; m < 4; m++ {
			row := ulp.Row(4*b + m)
			copy(row, v)
			if m > 0 {
				k := rng.Intn(d)
				row[k] = math.Nextafter32(row[k], float32(math.Inf(2*(m%2)-1)))
			}
			ul[4*b+m] = int32(2*b + m%2)
		}
	}
	return map[string]Input{"multiples": {Emb: mult, Labels: ml}, "1 ulp": {Emb: ulp, Labels: ul}}
}

// TestStrictExactCosine: under --distance cosine strict's retrieval
// metrics equal those of the exact cosine of the input rows (integer
// arithmetic), not of the rows normalised in float32.
func TestStrictExactCosine(t *testing.T) {
	t.Parallel()
	for name, in := range cosineInputs() {
		checkExact(t, name, in, "cosine")
	}
}

// ulpCopies is bases rows of dimension d, each with copies rows 1 ulp
// away from it in one coordinate; copy c of every base is in class c, so
// a query's first positive lies beyond its own base's copies and its rank
// among another base's copies is a near-tie.
func ulpCopies(bases, copies, d int, seed int64) Input {
	rng := rand.New(rand.NewSource(seed))
	x := mat32.Matrix{Rows: bases * copies, Cols: d, Data: make([]float32, bases*copies*d)}
	labels := make([]int32, bases*copies)
	for b := 0; b < bases; b++ {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
		for c := 0; c < copies; c++ {
			row := x.Row(b*copies + c)
			copy(row, v)
			if c > 0 {
				k := (c - 1) % d
				row[k] = math.Nextafter32(row[k], float32(math.Inf(2*(c%2)-1)))
			}
			labels[b*copies+c] = int32(c)
		}
	}
	return Input{Emb: x, Labels: labels}
}

// TestStrictExactWatchedRanks: MRR and mAP@1000, whose ranks lie beyond
// the k-NN list (R@1 asks for one neighbour), equal those of the exact
// ranking (integer arithmetic), for L2 and cosine. Each query has nine
// satellite negatives at distinct distances, so its list is certain; its
// positives lie among the 1-ulp copies of ulpCopies, where float32 ties.
func TestStrictExactWatchedRanks(t *testing.T) {
	t.Parallel()
	g := ulpCopies(30, 16, 8, 6)
	rng := rand.New(rand.NewSource(7))
	const nq = 60
	q := mat32.Matrix{Rows: nq, Cols: 8, Data: make([]float32, nq*8)}
	ql := make([]int32, nq)
	for i := 0; i < nq; i++ {
		for k := range q.Row(i) {
			q.Row(i)[k] = float32(3 * rng.NormFloat64())
		}
		ql[i] = int32(i % 16)
		for s := 1; s <= 9; s++ {
			row := slices.Clone(q.Row(i))
			row[s%8] += float32(s) / 16
			g.Emb.Data = append(g.Emb.Data, row...)
			g.Emb.Rows++
			g.Labels = append(g.Labels, 100)
		}
	}
	in := Input{Emb: q, Labels: ql, Gallery: &g.Emb, GalleryLabels: g.Labels}
	checkExact(t, "1 ulp copies", in, "", "R@1", "MRR", "mAP@1000")
	checkExact(t, "1 ulp copies cosine", in, "cosine", "R@1", "MRR", "mAP@1000")
	// A searcher that watches ranks but cannot make them exact (as the GPU
	// backend): strict searches as deep as the ranks' window instead.
	checkExactWith(t, "1 ulp copies, float32 watch", in, Options{Backend: Backend{Searcher: float32Watch{}}}, "R@1", "MRR", "mAP@1000")
}

// float32Watch is knn.Exact without Watch.Band: its watched ranks are
// those of the float32 distances.
type float32Watch struct{ knn.Exact }

func (float32Watch) WatchesExactly() bool { return false }

func (f float32Watch) Search(ctx context.Context, q, db mat32.Matrix, k int, opt knn.Options) (*knn.Neighbors, error) {
	if opt.Watch != nil {
		w := *opt.Watch
		w.Band, w.Order = nil, nil
		opt.Watch = &w
	}
	return f.Exact.Search(ctx, q, db, k, opt)
}
