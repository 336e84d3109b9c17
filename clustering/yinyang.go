package clustering

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"sync"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
	"github.com/dmlbench/dmlbench/knn"
)

// Pruned (Yinyang) assignment for KMeans.
//
// Yinyang k-means (Ding, Zhao, Shen, Musuvathi, Mytkowicz, "Yinyang
// K-Means: A Drop-In Replacement of the Classic K-Means with Consistent
// Speedup", ICML 2015) partitions the K centroids into G groups once, keeps
// for every point i and group g a lower bound lb_ig on the distance from x_i
// to every centroid of g other than the one x_i is assigned to, and after
// each centroid update lowers it by the largest drift of a centroid of g
// (triangle inequality: ‖x − c'‖ ≥ ‖x − c‖ − ‖c − c'‖). A group whose
// bound exceeds the point's current best distance cannot hold a better
// centroid and is skipped (group filter; the global filter is the same test
// over all groups at once); inside a surviving group, a panel of 16
// centroids is skipped when the old bound minus the panel's own largest
// drift still exceeds it (local filter, at the kernel's granularity).
// Here the groups are the nodes of a balanced bisection tree of the initial
// centroids (makeGroups) rather than Yinyang's k-means of them, so that
// every group is a whole number of full 16-centroid panels; the pass does
// not use a bound on the point's own group (the slot holds one on its
// other members for nearties.go): its home group (that of its previous
// centroid) is always searched first, which also gives the exact value of
// its previous centroid that History needs anyway. Rows are processed in
// tiles of 4 (the kernel's), sorted by their previous centroid, and a tile
// searches the union of what its rows need.
//
// Exactness. The full pass picks, per row, the lexicographic minimum of
// (v_ij, j) over all j, with v_ij = fl32(‖c_j‖²) − 2·fl32(⟨x_i, c_j⟩)
// computed by the micro-kernel; v_ij is a pure function of the bits of x_i
// and c_j. The pruned pass evaluates v_ij with the same arithmetic
// (boundsTile and boundsRows share argminTile's accumulation order, FMA by
// FMA, and its final step) for every
// candidate it keeps and takes the same lexicographic minimum, so it returns
// the full pass's answer as long as every skipped j has v_ij strictly
// greater than some evaluated value. Bounds are kept on true Euclidean
// distances d_ij = ‖x_i − c_j‖ and related to kernel values by the rounding
// bound below, so a skipped j satisfies d_ij ≥ lb > τ_i, which implies
// v_ij > v* (the best value evaluated so far).
//
// Rounding bound (u = 2⁻²⁴, γ_D = D·u/(1 − D·u) ≤ 2·D·u for D·u ≤ 1/2,
// X = ‖x‖², C = ‖c‖², P = ⟨x, c⟩ exact): the float32 dot product (FMA
// chain or not) has |ŝ − P| ≤ γ_D·Σ|x_t c_t| ≤ γ_D·‖x‖‖c‖ and |ŝ| ≤
// (1+γ_D)‖x‖‖c‖; the float32 norm |Ĉ − C| ≤ γ_D·C; the final step adds
// u·|Ĉ − 2ŝ|. With 2‖x‖‖c‖ ≤ X + C:
//
//	|v − (C − 2P)| ≤ (γ_D + u(1+γ_D))·(C + 2‖x‖‖c‖) ≤ 2(D+1)·u·(X + 2C).
//
// The code uses e_i = κ·(X_i + 2·C_max) + 10⁻³⁰ with κ = 2(D+2)·u·(1+2⁻¹⁰)
// and C_max ≥ max_j ‖c_j‖²: the extra u·(X+2C) and the 2⁻¹⁰ relative spare
// (≥ 10⁻⁸·(X + 2C_max)) absorb every float64 rounding made on bounds (each
// a relative 2⁻⁵³ of quantities ≤ 3·(X + 2C_max)), and 10⁻³⁰ absorbs
// float32 underflow. Then with the true D_ij = X + C_j − 2P_j = d_ij²:
//
//	v_ij ≥ D_ij − X − e_i  and  v_ij ≤ D_ij − X + e_i,
//
// so d_ij > τ_i := √(X_i + v* + e_i) implies v_ij > v*, and every
// evaluated v gives the lower bound d_ij ≥ √(max(0, X_i + v_ij − e_i)).
// Bounds are stored in float32 rounded down (float32(y·(1−2⁻²⁰)) < y, and
// lbDecay), and drifts are rounded up (roundUp32, a 2⁻³⁰ relative spare).
// Pruning is switched off (full passes) when D·u > 1/4 or the squared
// norms exceed 10³⁰ (float32 overflow).
//
// The extra ≈ 2·10⁻⁵ relative slack costs nothing measurable: it only
// matters for centroids within that relative distance of the best one.

const (
	yyMaxGroups     = 256      // cap on G
	yyBlockRows     = 32       // rows per work item (8 tiles)
	yyMaxBoundBytes = 64 << 20 // cap on the N×G float32 lower bounds
	yyBlockTiles    = yyBlockRows / tileRows
	yyNormLimit     = 1e30 // beyond this squared norm, no pruning
	// lbDown = 1 − 2⁻²² (exact in float32): lbDecay multiplies by it.
	lbDown = 1 - 1.0/(1<<22)
)

// lbDecay sets dst[g] = max(0, (src[g] − delta[g])·lbDown) in float32.
// It is a lower bound of src[g] − delta[g] (exact reals): if the difference
// y is positive, fl(fl(y)·lbDown) ≤ y(1+2⁻²⁴)²(1−2⁻²²) < y; otherwise
// the result is clamped to 0 and distances are non-negative. delta must be
// finite.
var lbDecay = lbDecayGeneric

func lbDecayGeneric(dst, src, delta []float32) {
	for g := range dst {
		dst[g] = max((src[g]-delta[g])*lbDown, 0)
	}
}

// groupArgmin reduces the lane-wise lexicographic minima (best, bidx:
// [4][16]) to each row's lexicographic minimum (value, id).
var groupArgmin = groupArgminGeneric

func groupArgminGeneric(best []float32, bidx []int32, out *[tileRows]float32, oid *[tileRows]int32) {
	for r := 0; r < tileRows; r++ {
		bv, bi := best[r*tileCols], bidx[r*tileCols]
		for l := 1; l < tileCols; l++ {
			v, id := best[r*tileCols+l], bidx[r*tileCols+l]
			if v < bv || (v == bv && id < bi) {
				bv, bi = v, id
			}
		}
		out[r], oid[r] = bv, bi
	}
}

// lbMask sets bit g of mask for every g with lb[g] ≤ tau.
var lbMask = lbMaskGeneric

func lbMaskGeneric(lb []float32, tau float32, mask []uint64) {
	for g, v := range lb {
		if v <= tau {
			mask[g>>6] |= 1 << (g & 63)
		}
	}
}

// roundUp32 returns a float32 ≥ v, at most math.MaxFloat32 (v ≥ 0).
func roundUp32(v float64) float32 {
	if v >= math.MaxFloat32 {
		return math.MaxFloat32
	}
	f := float32(v)
	if float64(f) < v {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// yinyangAssigner performs the repeated assignments of one k-means run (see
// the comment at the top of this file).
type yinyangAssigner struct {
	opt     KMeansOptions
	noPrune bool // tests: always full passes

	n, k, d int
	// Groups, fixed at the first pruned pass: grp[j] is centroid j's
	// group; group g owns panels gp[g] ≤ p < gp[g+1] of the permuted
	// packing whose lane l of panel p holds centroid ids[16p + l]
	// (math.MaxInt32 for padding); real[p] counts real lanes.
	ng   int
	grp  []int32
	gp   []int32
	ids  []int32
	real []int32
	// State between passes.
	prev []float32 // centroids of the previous pass (original order)
	// output slices of the previous pass (identity check for the
	// unchanged-centroids shortcut)
	lastAssign *int32
	lastDist   *float32
	lb         []float32 // n×ng lower bounds (nil: no valid bounds)
	x0         *float32  // the rows the state belongs to (&x.Data[0],
	xlen       int       // len(x.Data))
	xnorm      []float64 // ‖x_i‖² in float64
	norm       []float32 // rowNorm32(x_i), as the full pass computes it

	// Statistics.
	passEvals []int64 // (row, centroid) pairs evaluated in each pass
	fullRows  int64   // rows searched against all K (full passes)
	partRows  int64   // rows of pruned passes
	partPairs int64   // pairs evaluated in pruned passes
}

// yyGroupSize is the default target number of centroids per group (one
// panel; KMeansOptions.groupSize overrides it).
const yyGroupSize = 16

// numGroups is G: about K/size centroids per group (size 0: yyGroupSize),
// at most 256 groups and at most 64 MiB of float32 bounds (n·G·4 bytes);
// 1 disables pruning.
func numGroups(n, k, size int) int {
	if size <= 0 {
		size = yyGroupSize
	}
	g := (k + size - 1) / size
	g = min(g, yyMaxGroups, yyMaxBoundBytes/4/max(n, 1))
	return max(g, 1)
}

// assign assigns the rows of x to the k centroids cent (k×D). Rows must be
// the same matrix on every call that is meant to reuse the bounds.
func (ya *yinyangAssigner) assign(ctx context.Context, x mat32.Matrix, cent []float32, k int, assign []int32, dist []float32) error {
	opt := ya.opt
	n, d := x.Rows, x.Cols
	if opt.Searcher != nil {
		nb, err := opt.Searcher.Search(ctx, x, mat32.Matrix{Rows: k, Cols: d, Data: cent}, 1, knn.Options{Metric: knn.L2, Threads: opt.Threads})
		if err != nil {
			return fmt.Errorf("k-means assignment with %s: %w", opt.Searcher.Name(), err)
		}
		for i := range assign {
			id := nb.IDs[i]
			if id < 0 || int(id) >= k {
				return fmt.Errorf("k-means assignment with %s: row %d got centroid id %d", opt.Searcher.Name(), i, id)
			}
			assign[i] = id
			dist[i] = nb.Dist[i]
		}
		return nil
	}
	if opt.Assigner != nil {
		a, dd, err := opt.Assigner.NearestCentroids(ctx, x, mat32.Matrix{Rows: k, Cols: d, Data: cent})
		if err != nil {
			return fmt.Errorf("k-means assignment on %s: %w", opt.Assigner.Name(), err)
		}
		if len(a) != n || len(dd) != n {
			return fmt.Errorf("k-means assignment on %s: %d assignments and %d distances for %d rows", opt.Assigner.Name(), len(a), len(dd), n)
		}
		for i, id := range a {
			if id < 0 || int(id) >= k {
				return fmt.Errorf("k-means assignment on %s: row %d got centroid id %d", opt.Assigner.Name(), i, id)
			}
		}
		copy(assign, a)
		copy(dist, dd)
		ya.fullRows += int64(n)
		ya.passEvals = append(ya.passEvals, int64(n)*int64(k))
		return nil
	}
	if n > 0 && (&x.Data[0] != ya.x0 || len(x.Data) != ya.xlen || d != ya.d) {
		// Other rows: bounds and norms do not carry over.
		ya.lb, ya.xnorm, ya.norm, ya.x0, ya.xlen = nil, nil, nil, &x.Data[0], len(x.Data)
	}
	if ya.lb != nil && (ya.n != n || ya.k != k || ya.d != d) {
		ya.lb = nil
	}
	prune := !ya.noPrune && numGroups(n, k, opt.groupSize) > 1 && float64(d)/(1<<24) <= 0.25
	if prune && ya.xnorm == nil {
		ya.xnorm = make([]float64, n)
		ya.norm = make([]float32, n)
		for i := range ya.xnorm {
			var s float64
			for _, v := range x.Row(i) {
				s += float64(v) * float64(v)
			}
			ya.xnorm[i] = s
			ya.norm[i] = rowNorm32(x.Row(i))
		}
	}
	var cmax, xmax float64
	if prune {
		for j := 0; j < k; j++ {
			var s float64
			for _, v := range cent[j*d : (j+1)*d] {
				s += float64(v) * float64(v)
			}
			cmax = max(cmax, s)
		}
		for _, s := range ya.xnorm {
			xmax = max(xmax, s)
		}
		prune = cmax <= yyNormLimit && xmax <= yyNormLimit
	}
	if !prune {
		ya.lb = nil
		ya.fullRows += int64(n)
		ya.passEvals = append(ya.passEvals, int64(n)*int64(k))
		return packCentroids(cent, k, d).assign(ctx, x, opt.Threads, assign, dist)
	}
	first := ya.lb == nil
	if !first && len(assign) > 0 && &assign[0] == ya.lastAssign && &dist[0] == ya.lastDist && sameBits(cent, ya.prev) {
		// No centroid changed a bit since the previous pass over the same
		// rows: every kernel value, hence every assignment and distance,
		// is what that pass left in assign and dist (Lloyd's fixed point).
		ya.partRows += int64(n)
		ya.passEvals = append(ya.passEvals, 0)
		return nil
	}
	if first {
		ya.n, ya.k, ya.d = n, k, d
		ya.makeGroups(cent, k, d)
		ya.lb = make([]float32, n*ya.ng)
		ya.fullRows += int64(n)
	} else {
		ya.partRows += int64(n)
	}
	evals, err := ya.pass(ctx, x, cent, assign, dist, first, cmax*(1+1.0/(1<<20)))
	if err != nil {
		ya.lb = nil
		return err
	}
	if !first {
		ya.partPairs += evals
	}
	ya.passEvals = append(ya.passEvals, evals)
	ya.prev = append(ya.prev[:0], cent...)
	if n > 0 {
		ya.lastAssign, ya.lastDist = &assign[0], &dist[0]
	}
	return nil
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// makeGroups partitions the k centroids into at most numGroups groups of
// equal size S (a multiple of 16, the last group smaller) and orders each
// group's members into panels of 16, both by a balanced bisection tree: a
// node is split across the direction between its two extreme members (the
// member farthest from the node mean, then the member farthest from it),
// into a first part of S·⌈⌈n/S⌉/2⌉ members and the rest. Groups are the
// size-S nodes and panels the size-16 nodes below them, so that every panel
// but one is full and both are spatially coherent (Yinyang groups the
// initial centroids by k-means; equal sizes keep the kernel's 16 lanes
// busy). The grouping only affects how much is pruned, never the result.
func (ya *yinyangAssigner) makeGroups(cent []float32, k, d int) {
	g := min(numGroups(ya.n, k, ya.opt.groupSize), k)
	npan := (k + tileCols - 1) / tileCols
	size := tileCols * ((npan + g - 1) / g) // S
	all := make([]int32, k)
	for j := range all {
		all[j] = int32(j)
	}
	proj := make([]float64, k)
	mean := make([]float64, d)
	// split reorders ids so that consecutive runs of unit members are the
	// tree's nodes of that size, and calls leaf on each.
	var split func(ids []int32, unit int, leaf func([]int32))
	split = func(ids []int32, unit int, leaf func([]int32)) {
		if len(ids) <= unit {
			leaf(ids)
			return
		}
		clear(mean)
		for _, j := range ids {
			for t, v := range cent[int(j)*d : int(j+1)*d] {
				mean[t] += float64(v)
			}
		}
		for t := range mean {
			mean[t] /= float64(len(ids))
		}
		far := func(ref func(t int) float64) int32 {
			best, bj := -1.0, ids[0]
			for _, j := range ids {
				var s float64
				for t, v := range cent[int(j)*d : int(j+1)*d] {
					e := float64(v) - ref(t)
					s += e * e
				}
				if s > best {
					best, bj = s, j
				}
			}
			return bj
		}
		a := far(func(t int) float64 { return mean[t] })
		ca := cent[int(a)*d : int(a+1)*d]
		b := far(func(t int) float64 { return float64(ca[t]) })
		cb := cent[int(b)*d : int(b+1)*d]
		for _, j := range ids {
			var s float64
			for t, v := range cent[int(j)*d : int(j+1)*d] {
				s += float64(v) * (float64(cb[t]) - float64(ca[t]))
			}
			proj[j] = s
		}
		sort.Slice(ids, func(x, y int) bool {
			px, py := proj[ids[x]], proj[ids[y]]
			return px < py || (px == py && ids[x] < ids[y])
		})
		nl := unit * ((len(ids) + unit - 1) / unit / 2)
		if nl == 0 || nl >= len(ids) {
			nl = unit
		}
		split(ids[:nl], unit, leaf)
		split(ids[nl:], unit, leaf)
	}
	ya.grp = make([]int32, k)
	ya.gp = ya.gp[:0]
	ya.ids = ya.ids[:0]
	ya.real = ya.real[:0]
	ng := 0
	split(all, size, func(grp []int32) {
		ya.gp = append(ya.gp, int32(len(ya.real)))
		split(grp, tileCols, func(pan []int32) {
			ya.real = append(ya.real, int32(len(pan)))
			for l := 0; l < tileCols; l++ {
				if l < len(pan) {
					ya.ids = append(ya.ids, pan[l])
					ya.grp[pan[l]] = int32(ng)
				} else {
					ya.ids = append(ya.ids, math.MaxInt32)
				}
			}
		})
		ng++
	})
	ya.gp = append(ya.gp, int32(len(ya.real)))
	ya.ng = ng
}

// yyTile is the per-tile state of a pruned pass (4 rows).
type yyTile struct {
	rows [tileRows]int // original row indices
	x32  [tileRows][]float32
	// panels evaluated so far; from the second one on, the rows are
	// expanded into the block's pack and boundsTile (faster per panel)
	// replaces boundsRows (no expansion); both give the same values.
	npan  int
	nreal int // real rows (the rest is padding)
	norm  [tileRows]float32
	x     [tileRows]float64 // ‖x‖² (float64)
	e     [tileRows]float64 // rounding margin e_i
	tau   [tileRows]float64 // √(X + v* + e): skip d > tau
	cur   [tileRows]float32 // v*: best kernel value so far
	curID [tileRows]int32   // its centroid (lexicographic minimum)
	homes [tileRows]int32   // groups evaluated first (fully)
	nhome int
	// need has bit g set when some row's decayed bound for group g is at
	// most its τ right after the home groups (a superset of the groups
	// evaluated later, τ only decreasing).
	need []uint64
	// Evaluated groups, in evaluation order: group, the smallest kernel
	// value per row, and whether some panel was skipped.
	evG    []int32
	evM    []float32 // [len(evG)][tileRows]
	evM2   []float32 // second-smallest values, or −Inf (nearties.go)
	evSkip []bool
	// evSkipLow: per row, the smallest old bound minus panel drift over
	// the skipped panels (a lower bound on their members' distances).
	evSkipLow []float32
}

// pass runs one pruned assignment: rows in order of their previous
// assignment (so that the 4 rows of a tile usually share their groups),
// blocks of 8 tiles pulled by the workers; per tile, the home groups
// (those of the rows' previous centroids) are evaluated first, then every
// other group that some row of the tile cannot exclude. All decisions of a
// row depend only on its tile, which does not depend on the thread count.
// It returns the number of distance evaluations.
func (ya *yinyangAssigner) pass(ctx context.Context, x mat32.Matrix, cent []float32, assign []int32, dist []float32, first bool, cmax float64) (int64, error) {
	n, d := x.Rows, x.Cols
	ps := &yyPass{ya: ya, x: x, assign: assign, dist: dist, first: first, cmax: cmax,
		pk: ya.packGroups(cent), ord: ya.rowOrder(assign, n, first),
		kappa:   2 * float64(d+2) / (1 << 24) * (1 + 1.0/(1<<10)),
		zero:    make([]float32, d),
		tileLen: tileRows * lanes * d,
		nblocks: (n + yyBlockRows - 1) / yyBlockRows,
	}
	ps.pdrift, ps.gdrift = ya.drifts(cent, first)
	var (
		mu      sync.Mutex
		workers []*yyWorker
	)
	err := parallel.Blocks(ctx, ya.opt.Threads, ps.nblocks, func() *yyWorker {
		w := newYYWorker(ps)
		mu.Lock()
		workers = append(workers, w)
		mu.Unlock()
		return w
	}, (*yyWorker).block)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, w := range workers {
		total += w.pairs
	}
	return total, nil
}

// packGroups packs the centroids in group order (ya.ids); padding lanes get
// norm +Inf.
func (ya *yinyangAssigner) packGroups(cent []float32) *centroidPack {
	d := ya.d
	npan := len(ya.real)
	perm := make([]float32, npan*tileCols*d)
	for p, j := range ya.ids {
		if j != math.MaxInt32 {
			copy(perm[p*d:(p+1)*d], cent[int(j)*d:int(j+1)*d])
		}
	}
	pk := packCentroids(perm, npan*tileCols, d)
	for p, j := range ya.ids {
		if j == math.MaxInt32 {
			pk.norms[p] = float32(math.Inf(1))
		}
	}
	return pk
}

// drifts returns how far the centroids moved since the previous pass,
// rounded up: the largest drift per panel (local filter) and per group
// (float32, for lbDecay); zero on the first pass.
func (ya *yinyangAssigner) drifts(cent []float32, first bool) (pdrift []float64, gdrift []float32) {
	d := ya.d
	pdrift = make([]float64, len(ya.real))
	gdrift = make([]float32, ya.ng)
	if first {
		return pdrift, gdrift
	}
	for p := range pdrift {
		var m float64
		for _, j := range ya.ids[p*tileCols : (p+1)*tileCols] {
			if j == math.MaxInt32 {
				continue
			}
			m = max(m, knn.SquaredL2(cent[int(j)*d:int(j+1)*d], ya.prev[int(j)*d:int(j+1)*d]))
		}
		pdrift[p] = math.Sqrt(m) * (1 + 1.0/(1<<30))
	}
	for g := range gdrift {
		var m float64
		for p := ya.gp[g]; p < ya.gp[g+1]; p++ {
			m = max(m, pdrift[p])
		}
		gdrift[g] = roundUp32(m)
	}
	return pdrift, gdrift
}

// rowOrder orders the rows by the packed position of their previous
// assignment (counting sort, stable; the identity on the first pass): rows
// of one centroid are adjacent, and neighbouring tiles hold nearby
// centroids (the grouping tree's order), so they share home groups and
// mostly need the same other groups, which a block then loads once.
func (ya *yinyangAssigner) rowOrder(assign []int32, n int, first bool) []int32 {
	ord := make([]int32, n)
	if first {
		for i := range ord {
			ord[i] = int32(i)
		}
		return ord
	}
	pos := make([]int32, ya.k)
	for p, j := range ya.ids {
		if j != math.MaxInt32 {
			pos[j] = int32(p)
		}
	}
	start := make([]int32, len(ya.ids)+1)
	for _, a := range assign {
		start[pos[a]+1]++
	}
	for p := 1; p < len(start); p++ {
		start[p] += start[p-1]
	}
	for i, a := range assign {
		ord[start[pos[a]]] = int32(i)
		start[pos[a]]++
	}
	return ord
}

// yyPass is what the workers of one pruned pass share.
type yyPass struct {
	ya          *yinyangAssigner
	x           mat32.Matrix
	pk          *centroidPack // centroids in group order
	pdrift      []float64     // per panel
	gdrift      []float32     // per group
	ord         []int32       // rows in processing order
	assign      []int32
	dist        []float32
	first       bool
	cmax, kappa float64   // largest ‖c‖², rounding-margin factor κ
	zero        []float32 // the row of padding tiles
	tileLen     int       // floats of a packed row tile
	nblocks     int
}

// yyWorker is one worker of a pass with its scratch space.
type yyWorker struct {
	*yyPass
	old           []float32 // the block's bounds before decay, [row][group]
	pack          []float32 // the block's packed row tiles
	union         []uint64  // groups some tile of the block needs
	chunk         []int32
	infs          []float32
	gbest         []float32
	gbidx, maxIDs []int32
	gv            [tileRows]float32 // evalGroup: the group's minima per row
	gid           [tileRows]int32   // and their centroids
	tiles         []yyTile
	pairs         int64 // distance evaluations
}

func newYYWorker(ps *yyPass) *yyWorker {
	ng := ps.ya.ng
	w := &yyWorker{yyPass: ps,
		old:    make([]float32, yyBlockRows*ng),
		pack:   make([]float32, yyBlockTiles*ps.tileLen+packPad),
		infs:   make([]float32, tileRows*tileCols),
		union:  make([]uint64, (ng+63)/64),
		chunk:  make([]int32, 0, ng),
		gbest:  make([]float32, tileRows*tileCols),
		gbidx:  make([]int32, tileRows*tileCols),
		maxIDs: make([]int32, tileRows*tileCols),
		tiles:  make([]yyTile, yyBlockTiles),
	}
	for t := range w.tiles {
		w.tiles[t].evG = make([]int32, 0, ng)
		w.tiles[t].evM = make([]float32, 0, ng*tileRows)
		w.tiles[t].evM2 = make([]float32, 0, ng*tileRows)
		w.tiles[t].evSkip = make([]bool, 0, ng)
		w.tiles[t].evSkipLow = make([]float32, 0, ng*tileRows)
		w.tiles[t].need = make([]uint64, (ng+63)/64)
	}
	inf := float32(math.Inf(1))
	for i := range w.infs {
		w.infs[i], w.maxIDs[i] = inf, math.MaxInt32
	}
	return w
}

// block processes block b of the processing order (rows
// [32b, 32b + 32) of ps.ord).
func (w *yyWorker) block(b int) error {
	n := w.x.Rows
	clear(w.union)
	r0 := b * yyBlockRows
	r1 := min(r0+yyBlockRows, n)
	ntiles := (r1 - r0 + tileRows - 1) / tileRows
	for ti := 0; ti < ntiles; ti++ {
		w.loadTile(ti, r0, r1)
		w.homeGroups(ti)
	}
	w.otherGroups(ntiles)
	w.store(ntiles)
	return nil
}

// loadTile fills tile ti of the block of rows [r0, r1) of the processing
// order: its rows, their norms and rounding margins, decayed bounds (the
// old ones kept in w.old) and home groups.
func (w *yyWorker) loadTile(ti, r0, r1 int) {
	ya, ng := w.ya, w.ya.ng
	tl := &w.tiles[ti]
	tl.nreal = min(tileRows, r1-r0-ti*tileRows)
	tl.nhome = 0
	tl.npan = 0
	tl.evG, tl.evM, tl.evSkip = tl.evG[:0], tl.evM[:0], tl.evSkip[:0]
	tl.evM2, tl.evSkipLow = tl.evM2[:0], tl.evSkipLow[:0]
	for r := 0; r < tileRows; r++ {
		tl.tau[r] = math.Inf(-1)
		if r >= tl.nreal {
			tl.x32[r] = w.zero
			continue
		}
		li := ti*tileRows + r
		i := int(w.ord[r0+li])
		tl.rows[r] = i
		tl.x32[r] = w.x.Row(i)
		tl.norm[r] = ya.norm[i]
		tl.x[r] = ya.xnorm[i]
		tl.e[r] = w.kappa*(ya.xnorm[i]+2*w.cmax) + 1e-30
		tl.cur[r], tl.curID[r] = float32(math.Inf(1)), math.MaxInt32
		tl.tau[r] = math.Inf(1)
		lbi := ya.lb[i*ng : (i+1)*ng]
		o := w.old[li*ng : (li+1)*ng]
		copy(o, lbi)
		if !w.first {
			lbDecay(lbi, o, w.gdrift)
			h := ya.grp[w.assign[i]]
			dup := false
			for _, hh := range tl.homes[:tl.nhome] {
				dup = dup || hh == h
			}
			if !dup {
				tl.homes[tl.nhome] = h
				tl.nhome++
			}
		}
	}
}

// homeGroups evaluates tile ti's home groups fully, in ascending order,
// then marks the other groups some row cannot exclude (tl.need, and the
// block's union).
func (w *yyWorker) homeGroups(ti int) {
	ya, ng := w.ya, w.ya.ng
	tl := &w.tiles[ti]
	hs := tl.homes[:tl.nhome]
	for a := 1; a < len(hs); a++ {
		for c := a; c > 0 && hs[c] < hs[c-1]; c-- {
			hs[c], hs[c-1] = hs[c-1], hs[c]
		}
	}
	for _, h := range hs {
		w.evalGroup(ti, h, false)
	}
	clear(tl.need)
	for r := 0; r < tl.nreal; r++ {
		lbMask(ya.lb[tl.rows[r]*ng:(tl.rows[r]+1)*ng], float32(tl.tau[r]*(1+1.0/(1<<20))), tl.need)
	}
	for _, h := range hs {
		tl.need[h>>6] &^= 1 << (h & 63)
	}
	for q, m := range tl.need {
		w.union[q] |= m
	}
}

// otherGroups evaluates the groups beyond the home ones in chunks of at
// most chunkCols/16 panels (L2-resident) over the block's tiles, groups
// innermost: a chunk's panels are loaded once per block and a tile's
// packed rows stay in L1 across it, as in the full kernel's blocking.
// Every tile still meets its groups in ascending order, so its results do
// not depend on the block.
func (w *yyWorker) otherGroups(ntiles int) {
	w.chunk = w.chunk[:0]
	cpan := 0
	for q, m := range w.union {
		for ; m != 0; m &= m - 1 {
			g := int32(q*64 + bits.TrailingZeros64(m))
			np := int(w.ya.gp[g+1] - w.ya.gp[g])
			if cpan > 0 && cpan+np > chunkCols/tileCols {
				w.flush(ntiles)
				cpan = 0
			}
			w.chunk = append(w.chunk, g)
			cpan += np
		}
	}
	w.flush(ntiles)
}

// flush evaluates the chunk's groups for every tile that needs them (some
// row's decayed bound at most its τ), and empties the chunk.
func (w *yyWorker) flush(ntiles int) {
	ya, ng := w.ya, w.ya.ng
	for ti := 0; ti < ntiles; ti++ {
		tl := &w.tiles[ti]
		for _, g := range w.chunk {
			if tl.need[g>>6]&(1<<(g&63)) == 0 {
				continue
			}
			need := false
			for r := 0; r < tl.nreal; r++ {
				if float64(ya.lb[tl.rows[r]*ng+int(g)]) <= tl.tau[r] {
					need = true
					break
				}
			}
			if need {
				w.evalGroup(ti, g, !w.first)
			}
		}
	}
	w.chunk = w.chunk[:0]
}

// evalGroup evaluates group g for tile ti (all panels, or the panels some
// row cannot exclude when filter is set) and updates the tile's best
// values and thresholds τ.
func (w *yyWorker) evalGroup(ti int, g int32, filter bool) {
	ya, d, ng := w.ya, w.x.Cols, w.ya.ng
	old, pdrift, pk, gbest, gbidx := w.old, w.pdrift, w.pk, w.gbest, w.gbidx
	tl := &w.tiles[ti]
	copy(gbest, w.infs)
	copy(gbidx, w.maxIDs)
	evaluated, skipped := false, false
	skipLow := [tileRows]float64{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}
	for p := ya.gp[g]; p < ya.gp[g+1]; p++ {
		if filter {
			need := false
			for r := 0; r < tl.nreal; r++ {
				if float64(old[(ti*tileRows+r)*ng+int(g)])-pdrift[p] <= tl.tau[r] {
					need = true
					break
				}
			}
			if !need {
				skipped = true
				for r := 0; r < tl.nreal; r++ {
					skipLow[r] = min(skipLow[r], float64(old[(ti*tileRows+r)*ng+int(g)])-pdrift[p])
				}
				continue
			}
		}
		cp, cn, ci := pk.panels[int(p)*d*tileCols:], pk.norms[int(p)*tileCols:int(p+1)*tileCols], ya.ids[int(p)*tileCols:int(p+1)*tileCols]
		rt := w.pack[ti*w.tileLen:]
		switch tl.npan {
		case 0:
			boundsRows(tl.x32[0], tl.x32[1], tl.x32[2], tl.x32[3], cp, cn, ci, gbest, gbidx, d)
		case 1:
			expandTileRows(rt, &tl.x32, d)
			fallthrough
		default:
			boundsTile(rt, cp, cn, ci, gbest, gbidx, d)
		}
		tl.npan++
		w.pairs += int64(tl.nreal) * int64(ya.real[p])
		evaluated = true
	}
	if !evaluated {
		return
	}
	tl.evG = append(tl.evG, g)
	tl.evSkip = append(tl.evSkip, skipped)
	for _, v := range skipLow {
		// float32(y·(1−2⁻²⁰)) < y, as for the evaluated panels (store).
		tl.evSkipLow = append(tl.evSkipLow, float32(max(0, v)*(1-1.0/(1<<20))))
	}
	// The worker's arrays, not locals: passed to the function variable
	// groupArgmin, locals would escape and cost a heap allocation each.
	gv, gid := &w.gv, &w.gid
	groupArgmin(gbest, gbidx, gv, gid)
	tl.evM = append(tl.evM, gv[:]...)
	tl.evM2 = appendSecond(tl.evM2, gbest, gbidx, gid, !filter && !w.first && ya.gp[g+1]-ya.gp[g] == 1)
	for r := 0; r < tl.nreal; r++ {
		if a := gv[r]; a < tl.cur[r] || (a == tl.cur[r] && gid[r] < tl.curID[r]) {
			if a < tl.cur[r] {
				tl.tau[r] = math.Sqrt(max(0, tl.x[r]+float64(a)+tl.e[r]))
			}
			tl.cur[r], tl.curID[r] = a, gid[r]
		}
	}
}

// expandTileRows writes the packed row tile boundsTile reads, the layout
// of expandRow for each of the 4 rows (value t of row r in the 8 lanes at
// dst[32t + 8r :]), dimension by dimension so that the stores are
// contiguous. Unlike expandRow it does not compute the rows' squared
// norms: the pass already holds them (tl.norm).
func expandTileRows(dst []float32, x *[tileRows][]float32, d int) {
	x0, x1, x2, x3 := x[0][:d], x[1][:d], x[2][:d], x[3][:d]
	dst = dst[:d*tileRows*lanes]
	for t := range x0 {
		q := (*[tileRows * lanes]float32)(dst[t*tileRows*lanes:])
		v0, v1, v2, v3 := x0[t], x1[t], x2[t], x3[t]
		*q = [tileRows * lanes]float32{
			v0, v0, v0, v0, v0, v0, v0, v0,
			v1, v1, v1, v1, v1, v1, v1, v1,
			v2, v2, v2, v2, v2, v2, v2, v2,
			v3, v3, v3, v3, v3, v3, v3, v3,
		}
	}
}

// store writes the block's assignments and distances, and the new lower
// bounds of every group a tile evaluated.
func (w *yyWorker) store(ntiles int) {
	ya, ng := w.ya, w.ya.ng
	for ti := 0; ti < ntiles; ti++ {
		tl := &w.tiles[ti]
		for r := 0; r < tl.nreal; r++ {
			i := tl.rows[r]
			bv, bi := tl.cur[r], tl.curID[r]
			w.assign[i] = bi
			w.dist[i] = max(tl.norm[r]+bv, 0)
			lbi := ya.lb[i*ng : (i+1)*ng]
			ga := ya.grp[bi]
			for q, g := range tl.evG {
				if g == ga {
					// The group of the new centroid is the row's home
					// group next pass: searched fully, its bound is
					// never read; nearties.go reads it.
					lbi[g] = ownGroupBound(tl.evM2[q*tileRows+r], tl.x[r], tl.e[r])
					continue
				}
				v := tl.evM[q*tileRows+r]
				// float32(y·(1−2⁻²⁰)) ≤ y(1−2⁻²⁰)(1+2⁻²⁴) < y.
				l := float32(math.Sqrt(max(0, tl.x[r]+float64(v)-tl.e[r])) * (1 - 1.0/(1<<20)))
				if tl.evSkip[q] {
					// The skipped panels' own bound (the local filter's),
					// tighter than the group's decayed one.
					l = min(l, tl.evSkipLow[q*tileRows+r])
				}
				lbi[g] = l
			}
		}
	}
}
