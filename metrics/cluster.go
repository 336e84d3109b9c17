package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// contingency is the class × cluster count table in sparse form, built in
// O(N); every clustering metric reads it in O(nnz + C + K).
type contingency struct {
	n      int
	classN []int  // a_i: items per class
	clustN []int  // b_j: items per cluster
	cells  []cell // n_ij > 0, sorted by (class, cluster): sums run in a fixed order
}

type cell struct {
	class, cluster int32
	n              int
}

func newContingency(labels, clusters []int32) (*contingency, error) {
	if len(labels) != len(clusters) {
		return nil, fmt.Errorf("contingency: %d labels vs %d cluster ids", len(labels), len(clusters))
	}
	c := &contingency{n: len(labels)}
	counts := make(map[[2]int32]int, len(labels))
	for i, y := range labels {
		k := clusters[i]
		if y < 0 || k < 0 {
			return nil, fmt.Errorf("contingency: negative id at row %d", i)
		}
		for int(y) >= len(c.classN) {
			c.classN = append(c.classN, 0)
		}
		for int(k) >= len(c.clustN) {
			c.clustN = append(c.clustN, 0)
		}
		c.classN[y]++
		c.clustN[k]++
		counts[[2]int32{y, k}]++
	}
	// Map iteration order is random; floating-point sums over the cells
	// must not be (same input → same NMI/AMI bits).
	c.cells = make([]cell, 0, len(counts))
	for key, nij := range counts {
		c.cells = append(c.cells, cell{key[0], key[1], nij})
	}
	slices.SortFunc(c.cells, func(a, b cell) int {
		if a.class != b.class {
			return cmp.Compare(a.class, b.class)
		}
		return cmp.Compare(a.cluster, b.cluster)
	})
	return c, nil
}

func entropy(counts []int, n int) float64 {
	h := 0.0
	for _, a := range counts {
		if a > 0 {
			p := float64(a) / float64(n)
			h -= p * math.Log(p)
		}
	}
	return h
}

// mutualInfo is I(Y;Ω) in nats.
func (c *contingency) mutualInfo() float64 {
	n := float64(c.n)
	mi := 0.0
	for _, e := range c.cells {
		nij := e.n
		a, b := float64(c.classN[e.class]), float64(c.clustN[e.cluster])
		mi += float64(nij) / n * (math.Log(float64(nij)) + math.Log(n) - math.Log(a) - math.Log(b))
	}
	return max(mi, 0)
}

// NMI returns I/((H(Y)+H(Ω))/2), sklearn's arithmetic normalisation. Both
// partitions trivial (one group each) gives 1, as sklearn does.
func (c *contingency) NMI() float64 {
	hy, hk := entropy(c.classN, c.n), entropy(c.clustN, c.n)
	if hy == 0 && hk == 0 {
		return 1
	}
	return c.mutualInfo() / ((hy + hk) / 2)
}

// F1 returns the pair-counting F1: 2·TP/(same-class pairs + same-cluster
// pairs) with TP = pairs sharing class and cluster (unordered pairs).
func (c *contingency) F1() float64 {
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	tp, sc, sk := 0.0, 0.0, 0.0
	for _, e := range c.cells {
		nij := e.n
		tp += pairs(nij)
	}
	for _, a := range c.classN {
		sc += pairs(a)
	}
	for _, b := range c.clustN {
		sk += pairs(b)
	}
	if sc+sk == 0 {
		return 0
	}
	return 2 * tp / (sc + sk)
}

// AMI returns (I − E[I]) / ((H(Y)+H(Ω))/2 − E[I]) (Vinh et al. 2010,
// arithmetic mean, as sklearn's adjusted_mutual_info_score).
func (c *contingency) AMI() float64 {
	hy, hk := entropy(c.classN, c.n), entropy(c.clustN, c.n)
	nonzero := func(v []int) int {
		k := 0
		for _, x := range v {
			if x > 0 {
				k++
			}
		}
		return k
	}
	// sklearn: identical trivial partitions score 1.
	if (nonzero(c.classN) == 1 && nonzero(c.clustN) == 1) || (nonzero(c.classN) == c.n && nonzero(c.clustN) == c.n) {
		return 1
	}
	mi := c.mutualInfo()
	emi := expectedMutualInfo(c.classN, c.clustN, c.n)
	den := (hy+hk)/2 - emi
	if math.Abs(den) < 1e-15 {
		den = math.Copysign(1e-15, den)
		if den == 0 {
			den = 1e-15
		}
	}
	return (mi - emi) / den
}

// expectedMutualInfo is E[I] under the hypergeometric model of random
// partitions with fixed marginals (Vinh et al. 2010, eq. 24a):
//
//	E[I] = Σ_i Σ_j Σ_{n=max(1,a_i+b_j−N)}^{min(a_i,b_j)} (n/N) log(N·n/(a_i b_j)) ·
//	       a_i! b_j! (N−a_i)! (N−b_j)! / (N! n! (a_i−n)! (b_j−n)! (N−a_i−b_j+n)!)
//
// The term depends on (a_i, b_j) only, so it is evaluated once per distinct
// pair of marginal values times their multiplicities, with log-factorials
// from one table: milliseconds at SOP scale where the literal double sum has
// 10⁸ (class, cluster) pairs.
func expectedMutualInfo(classN, clustN []int, n int) float64 {
	lf := make([]float64, n+1) // log k!
	for k := 2; k <= n; k++ {
		lf[k] = lf[k-1] + math.Log(float64(k))
	}
	multA, multB := multiplicities(classN), multiplicities(clustN)
	N := float64(n)
	logN := math.Log(N)
	emi := 0.0
	for _, am := range multA {
		a, ma := am[0], am[1]
		for _, bm := range multB {
			b, mb := bm[0], bm[1]
			lo := max(1, a+b-n)
			hi := min(a, b)
			fixed := lf[a] + lf[b] + lf[n-a] + lf[n-b] - lf[n]
			term := 0.0
			for k := lo; k <= hi; k++ {
				kf := float64(k)
				logp := fixed - lf[k] - lf[a-k] - lf[b-k] - lf[n-a-b+k]
				term += kf / N * (logN + math.Log(kf) - math.Log(float64(a)) - math.Log(float64(b))) * math.Exp(logp)
			}
			emi += float64(ma) * float64(mb) * term
		}
	}
	return emi
}

// multiplicities returns the distinct positive values of v with their
// counts, ascending by value (a fixed summation order: same input, same bits).
func multiplicities(v []int) [][2]int {
	m := map[int]int{}
	for _, x := range v {
		if x > 0 {
			m[x]++
		}
	}
	out := make([][2]int, 0, len(m))
	for x, c := range m {
		out = append(out, [2]int{x, c})
	}
	slices.SortFunc(out, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	return out
}
