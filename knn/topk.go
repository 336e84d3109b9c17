package knn

import (
	"math"
	"math/bits"
	"slices"
)

// Candidates are ranked by a single uint64 key: the order-preserving bit
// pattern of the internal distance D (smaller is closer; IP uses D = −q·x) in
// the high 32 bits and the database index in the low 32 bits. Comparing keys
// therefore compares (D, index) lexicographically, which is exactly the
// package's tie rule (equal distances → lower index first), and the k
// smallest keys are a unique set whatever order candidates arrive in.

// orderedBits maps a float32 to a uint32 with the same order (−0 counts as +0).
func orderedBits(d float32) uint32 {
	if d == 0 {
		d = 0 // fold −0 into +0
	}
	b := math.Float32bits(d)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

// fromOrderedBits inverts orderedBits.
func fromOrderedBits(u uint32) float32 {
	if u&0x80000000 != 0 {
		return math.Float32frombits(u &^ 0x80000000)
	}
	return math.Float32frombits(^u)
}

func keyOf(d float32, id int) uint64 { return uint64(orderedBits(d))<<32 | uint64(uint32(id)) }

func keyDist(key uint64) float32 { return fromOrderedBits(uint32(key >> 32)) }

// topk is one query's bounded candidate buffer: a "buffered partial select".
// Accepted keys are appended; when the buffer is full the k smallest are
// selected in O(cap) (quickselect) and the k-th smallest becomes the
// admission bound, so a push costs amortised O(cap/(cap−k)) and a rejected
// candidate one compare. Callers pre-filter with the float bound
// thrF = keyDist(bound) (a SIMD compare D <= thrF inside the micro-kernel):
// candidates with D < thrF always enter, D == thrF is decided by the index.
type topk struct {
	buf   []uint64 // len = candidates held, cap = capacity (> k)
	bound uint64   // keys >= bound cannot be among the k nearest
}

func (t *topk) reset(buf []uint64) {
	t.buf = buf[:0:len(buf)]
	t.bound = math.MaxUint64
}

// push offers key; it returns true when the admission bound tightened (the
// caller then refreshes its float threshold from t.bound).
func (t *topk) push(key uint64, k int) bool {
	if key >= t.bound {
		return false
	}
	t.buf = append(t.buf, key) // never grows: compacted below before len reaches cap
	if len(t.buf) < cap(t.buf) {
		return false
	}
	selectK(t.buf, k)
	t.bound = t.buf[k-1]
	t.buf = t.buf[:k]
	return true
}

// thrF is the float pre-filter threshold matching t.bound.
func (t *topk) thrF() float32 {
	if t.bound == math.MaxUint64 {
		return posInf
	}
	return keyDist(t.bound)
}

// flush writes the (at most k) nearest candidates in ascending key order
// into ids/dist (len k), padding with id −1 and pad distance. ip negates the
// internal distance back to an inner product.
func (t *topk) flush(k int, ids []int32, dist []float32, ip bool, pad float32) {
	b := t.buf
	if len(b) > k {
		selectK(b, k)
		b = b[:k]
	}
	slices.Sort(b)
	for i, key := range b {
		ids[i] = int32(uint32(key))
		d := keyDist(key)
		if ip {
			d = -d
			if d == 0 {
				d = 0
			}
		}
		dist[i] = d
	}
	for i := len(b); i < len(ids); i++ {
		ids[i], dist[i] = -1, pad
	}
	t.buf = t.buf[:0]
}

// selectK rearranges a (len >= k >= 1, distinct keys) so that a[:k] holds the
// k smallest keys and a[k-1] is the largest of them (quickselect with
// median-of-three Hoare partitions; falls back to sorting the remaining
// range after 2·log2(n)+8 rounds, so the worst case is O(n log n)).
func selectK(a []uint64, k int) {
	lo, hi, target := 0, len(a)-1, k-1
	budget := 2*bits.Len(uint(len(a))) + 8
	for hi-lo > 24 {
		if budget == 0 {
			slices.Sort(a[lo : hi+1])
			return
		}
		budget--
		mid := lo + (hi-lo)/2
		x, y, z := a[lo], a[mid], a[hi]
		if x > y {
			x, y = y, x
		}
		if y > z {
			y = z
			if x > y {
				y = x
			}
		}
		p := y
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case target <= j:
			hi = j
		case target >= i:
			lo = i
		default:
			return // a[target] == p, everything left of it is smaller
		}
	}
	// Small range: insertion sort.
	for i := lo + 1; i <= hi; i++ {
		v := a[i]
		j := i
		for j > lo && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}
