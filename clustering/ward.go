package clustering

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dmlbench/dmlbench/internal/mat32"
)

// Ward is agglomerative clustering with Ward's minimum-variance linkage
// (Ward 1963; scikit-learn AgglomerativeClustering(linkage="ward"), one of
// the fixed-K methods of Seidenschwarz et al. 2021 Tab. 4), cut at K clusters.
//
// The hierarchy is built with the nearest-neighbour-chain algorithm (Murtagh
// 1983; Müllner 2011, "Modern hierarchical, agglomerative clustering
// algorithms", §3.3), which is exact for Ward because the linkage is
// reducible: merge distances are maintained with the Lance–Williams update
//
//	d(k, i∪j) = ((n_i+n_k)·d(k,i) + (n_j+n_k)·d(k,j) − n_k·d(i,j)) / (n_i+n_j+n_k),
//
// starting from d(i,j) = ‖x_i − x_j‖², so that d(A,B) = 2·n_A·n_B/(n_A+n_B)·
// ‖c_A − c_B‖² (twice the increase of the within-cluster sum of squares).
// The N−1 merges are sorted by height and the first N−K applied.
// Ties: the nearest neighbour is the lowest index, except that the previous
// chain element wins a tie (needed for termination).
//
// Complexity: O(N²·D) to fill the distances, O(N²) for the chain; memory
// 8·N(N−1)/2 bytes (float64 condensed matrix), hence Params.MaxWardPoints.
type Ward struct{ p Params }

// NewWard validates the parameters Ward uses (K, MaxWardPoints).
func NewWard(p Params) (*Ward, error) {
	if p.K <= 0 {
		return nil, fmt.Errorf("%w: ward needs K > 0, got %d", ErrBadInput, p.K)
	}
	if p.MaxWardPoints <= 0 {
		return nil, fmt.Errorf("%w: ward needs MaxWardPoints > 0, got %d", ErrBadInput, p.MaxWardPoints)
	}
	return &Ward{p}, nil
}

// Name implements Clusterer.
func (w *Ward) Name() string { return "ward" }

// Cluster implements Clusterer.
func (w *Ward) Cluster(ctx context.Context, x mat32.Matrix) ([]int32, error) {
	if err := checkData(x); err != nil {
		return nil, err
	}
	n := x.Rows
	if err := checkK("ward", w.p.K, n); err != nil {
		return nil, err
	}
	if n > w.p.MaxWardPoints {
		return nil, fmt.Errorf("%w: ward on N = %d points exceeds MaxWardPoints = %d (its O(N²) distance matrix would need %.1f GB); raise the limit or use kmeans/birch",
			ErrBadInput, n, w.p.MaxWardPoints, 4*float64(n)*float64(n)/1e9)
	}
	merges, err := wardMerges(ctx, x)
	if err != nil {
		return nil, err
	}
	return cutMerges(n, merges, w.p.K), nil
}

// merge records that cluster slots a < b were merged (b is absorbed into a)
// at height h.
type merge struct {
	a, b int32
	h    float64
}

// condensedIndex is the position of pair (i, j), i < j, in an n×n condensed
// upper-triangular matrix.
func condensedIndex(n, i, j int) int { return i*n - i*(i+1)/2 + j - i - 1 }

// wardMerges runs the NN-chain algorithm and returns the N−1 merges in the
// order they were performed.
func wardMerges(ctx context.Context, x mat32.Matrix) ([]merge, error) {
	n := x.Rows
	if n == 1 {
		return nil, nil
	}
	dist := make([]float64, n*(n-1)/2)
	for i := 0; i < n; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		xi := x.Row(i)
		base := condensedIndex(n, i, i+1)
		for j := i + 1; j < n; j++ {
			dist[base+j-i-1] = sqDist64(xi, x.Row(j))
		}
	}
	d := func(i, j int) float64 {
		if i > j {
			i, j = j, i
		}
		return dist[condensedIndex(n, i, j)]
	}
	size := make([]float64, n)
	active := make([]bool, n)
	for i := range size {
		size[i], active[i] = 1, true
	}
	merges := make([]merge, 0, n-1)
	chain := make([]int, 0, n)
	firstActive := 0
	for step := 0; len(merges) < n-1; step++ {
		if step%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if len(chain) == 0 {
			for !active[firstActive] {
				firstActive++
			}
			chain = append(chain, firstActive)
		}
		a := chain[len(chain)-1]
		prev := -1
		best := math.Inf(1)
		if len(chain) >= 2 {
			prev = chain[len(chain)-2]
			best = d(a, prev)
		}
		b := prev
		for j := 0; j < n; j++ {
			if j == a || !active[j] {
				continue
			}
			if v := d(a, j); v < best {
				best, b = v, j
			}
		}
		if b != prev {
			chain = append(chain, b)
			continue
		}
		// a and prev are reciprocal nearest neighbours: merge them.
		chain = chain[:len(chain)-2]
		s, t := min(a, b), max(a, b)
		ns, nt := size[s], size[t]
		for k := 0; k < n; k++ {
			if k == s || k == t || !active[k] {
				continue
			}
			nk := size[k]
			v := ((ns+nk)*d(s, k) + (nt+nk)*d(t, k) - nk*best) / (ns + nt + nk)
			if s < k {
				dist[condensedIndex(n, s, k)] = v
			} else {
				dist[condensedIndex(n, k, s)] = v
			}
		}
		size[s] += nt
		active[t] = false
		merges = append(merges, merge{int32(s), int32(t), best})
	}
	return merges, nil
}

// cutMerges applies the n−k lowest merges (stable by execution order on
// equal heights) and returns dense labels in order of first appearance.
func cutMerges(n int, merges []merge, k int) []int32 {
	sorted := append([]merge(nil), merges...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].h < sorted[j].h })
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, m := range sorted[:n-k] {
		ra, rb := find(m.a), find(m.b)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	roots := make([]int32, n)
	for i := range roots {
		roots[i] = find(int32(i))
	}
	return relabel(roots)
}
