package clustering

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Birch is BIRCH clustering (Zhang, Ramakrishnan & Livny 1996; as
// scikit-learn Birch, one of the fixed-K methods of Seidenschwarz et al. 2021 Tab. 4):
//
//  1. Every row is inserted, in row order, into a CF-tree whose entries are
//     clustering features CF = (n, LS = Σx, SS = Σ‖x‖²). At each level the
//     entry with the closest centroid is followed; at a leaf the row joins
//     the closest subcluster if the merged radius
//     √(SS/n − ‖LS/n‖²) ≤ BirchThreshold, otherwise it starts a new
//     subcluster. A node holding more than BirchBranching entries is split
//     around its two farthest entries (each entry goes to the closer of the
//     two, ties to the first), recursively up to a new root.
//  2. Global step: KMeans (faiss conventions) with K clusters on the leaf
//     subcluster centroids, best objective of 10 restarts with seeds
//     Params.Seed … Seed+9 (sklearn KMeans n_init = 10). scikit-learn's default global step
//     is Ward agglomeration instead; k-means is used here, as in
//     Seidenschwarz et al. 2021 Tab. 4. When there are fewer than K subclusters each subcluster is a
//     cluster (sklearn likewise returns fewer clusters, with a warning).
//  3. Each row takes the global label of its nearest subcluster centroid
//     (sklearn Birch.predict).
//
// Complexity: O(N·B·D·depth) for the tree (B = branching factor), plus the
// k-means on S ≤ N subclusters (O(20·S·K·D)) and the final O(N·S·D)
// assignment; memory O(S·D).
type Birch struct{ p Params }

// NewBirch validates K, BirchThreshold and BirchBranching.
func NewBirch(p Params) (*Birch, error) {
	switch {
	case p.K <= 0:
		return nil, fmt.Errorf("%w: birch needs K > 0, got %d", ErrBadInput, p.K)
	case !(p.BirchThreshold > 0) || math.IsInf(p.BirchThreshold, 0):
		return nil, fmt.Errorf("%w: birch needs a finite threshold > 0, got %v", ErrBadInput, p.BirchThreshold)
	case p.BirchBranching < 2:
		return nil, fmt.Errorf("%w: birch needs a branching factor >= 2, got %d", ErrBadInput, p.BirchBranching)
	}
	return &Birch{p}, nil
}

// Name implements Clusterer.
func (b *Birch) Name() string { return "birch" }

type cfEntry struct {
	n     float64
	ls    []float64
	ss    float64
	child *cfNode // nil for a leaf subcluster
}

func (e *cfEntry) centroid(dst []float64) []float64 {
	for i, v := range e.ls {
		dst[i] = v / e.n
	}
	return dst
}

func (e *cfEntry) add(o *cfEntry) {
	e.n += o.n
	e.ss += o.ss
	for i, v := range o.ls {
		e.ls[i] += v
	}
}

type cfNode struct {
	leaf    bool
	entries []*cfEntry
}

type cfTree struct {
	root      *cfNode
	threshold float64
	branching int
	d         int
	buf       []float64
}

func sqDistCentroid(a, b *cfEntry) float64 {
	var s float64
	for i := range a.ls {
		e := a.ls[i]/a.n - b.ls[i]/b.n
		s += e * e
	}
	return s
}

// insert adds e under node and reports whether node overflowed.
func (t *cfTree) insert(node *cfNode, e *cfEntry) bool {
	if len(node.entries) == 0 {
		node.entries = append(node.entries, e)
		return false
	}
	ci, cd := 0, math.Inf(1)
	for i, c := range node.entries {
		if dd := sqDistCentroid(c, e); dd < cd {
			ci, cd = i, dd
		}
	}
	closest := node.entries[ci]
	if closest.child != nil {
		if !t.insert(closest.child, e) {
			closest.add(e)
			return false
		}
		a, b := t.split(closest.child)
		node.entries[ci] = a
		node.entries = append(node.entries, b)
		return len(node.entries) > t.branching
	}
	// Leaf: try to absorb into the closest subcluster.
	n := closest.n + e.n
	ss := closest.ss + e.ss
	var c2 float64
	for i := range closest.ls {
		m := (closest.ls[i] + e.ls[i]) / n
		c2 += m * m
	}
	if ss/n-c2 <= t.threshold*t.threshold {
		closest.add(e)
		return false
	}
	node.entries = append(node.entries, e)
	return len(node.entries) > t.branching
}

// split divides node's entries around its two farthest entries and returns
// the two new parent entries.
func (t *cfTree) split(node *cfNode) (*cfEntry, *cfEntry) {
	es := node.entries
	fa, fb, fd := 0, 1, -1.0
	for i := range es {
		for j := i + 1; j < len(es); j++ {
			if dd := sqDistCentroid(es[i], es[j]); dd > fd {
				fa, fb, fd = i, j, dd
			}
		}
	}
	na := &cfNode{leaf: node.leaf}
	nb := &cfNode{leaf: node.leaf}
	pa := &cfEntry{ls: make([]float64, t.d), child: na}
	pb := &cfEntry{ls: make([]float64, t.d), child: nb}
	for _, e := range es {
		if sqDistCentroid(e, es[fa]) <= sqDistCentroid(e, es[fb]) {
			na.entries = append(na.entries, e)
			pa.add(e)
		} else {
			nb.entries = append(nb.entries, e)
			pb.add(e)
		}
	}
	return pa, pb
}

func (t *cfTree) leaves(node *cfNode, out []*cfEntry) []*cfEntry {
	for _, e := range node.entries {
		if e.child == nil {
			out = append(out, e)
		} else {
			out = t.leaves(e.child, out)
		}
	}
	return out
}

// Cluster implements Clusterer.
func (b *Birch) Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error) {
	if err := checkData(x); err != nil {
		return nil, err
	}
	n, d := x.Rows, x.Cols
	if err := checkK("birch", b.p.K, n); err != nil {
		return nil, err
	}
	t := &cfTree{root: &cfNode{leaf: true}, threshold: b.p.BirchThreshold, branching: b.p.BirchBranching, d: d}
	for i := 0; i < n; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e := &cfEntry{n: 1, ls: make([]float64, d)}
		for j, v := range x.Row(i) {
			e.ls[j] = float64(v)
			e.ss += float64(v) * float64(v)
		}
		if t.insert(t.root, e) {
			a, c := t.split(t.root)
			t.root = &cfNode{entries: []*cfEntry{a, c}}
		}
	}
	subs := t.leaves(t.root, nil)
	cent := make([]float32, len(subs)*d)
	tmp := make([]float64, d)
	for s, e := range subs {
		for j, v := range e.centroid(tmp) {
			cent[s*d+j] = float32(v)
		}
	}
	cm := mat32.Matrix{Rows: len(subs), Cols: d, Data: cent}
	global := make([]int32, len(subs))
	for s := range global {
		global[s] = int32(s)
	}
	if len(subs) > b.p.K {
		var best *KMeansResult
		for r := int64(0); r < 10; r++ {
			opt := DefaultKMeansOptions()
			opt.Seed, opt.Threads = b.p.Seed+r, b.p.Threads
			res, err := KMeans(ctx, cm, b.p.K, opt)
			if err != nil {
				return nil, fmt.Errorf("birch global clustering: %w", err)
			}
			if best == nil || res.Objective < best.Objective {
				best = res
			}
		}
		global = best.Assign
	}
	near, _, err := NearestCentroids(ctx, x, cm, b.p.Threads)
	if err != nil {
		return nil, err
	}
	out := make([]int32, n)
	for i, s := range near {
		out[i] = global[s]
	}
	return relabel(out), nil
}
