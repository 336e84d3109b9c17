package knn

import (
	"math"
	"math/bits"
	"slices"

	"github.com/dmlbench/dmlbench/internal/knnkey"
)

// Candidates are ranked by a single uint64 key (internal/knnkey): the
// order-preserving bits of the internal distance D in the high 32 bits and
// the database index in the low 32, so the k smallest keys are a unique
// set whatever order candidates arrive in, ties to the lower index.

// topk is one query's bounded candidate buffer: a "buffered partial select".
// Accepted keys are appended; when the buffer is full the k smallest are
// selected in O(cap) (radixSelect) and the k-th smallest becomes the
// admission bound, so a push costs amortised O(cap/(cap−k)) and a rejected
// candidate one compare. Callers pre-filter with the float bound
// thrF = knnkey.Dist(bound) (a SIMD compare D <= thrF inside the micro-kernel):
// candidates with D < thrF always enter, D == thrF is decided by the index.
type topk struct {
	buf   []uint64    // len = candidates held, cap = capacity (> k)
	bound uint64      // keys >= bound cannot be among the k nearest
	w     *watchState // non-nil when the query's watched rows are ranked
}

func (t *topk) reset(buf []uint64) {
	t.buf = buf[:0:len(buf)]
	t.bound = math.MaxUint64
}

// smallK is the largest k kept as a sorted insertion list instead of a
// buffered select: the bound is then exact after every insertion, so fewer
// candidates pass the pre-filter, and an insertion shifts at most k keys.
const smallK = 32

// push offers key; it returns true when the admission bound tightened (the
// caller then refreshes its float threshold from t.bound). Small enough to
// be inlined into the drivers' mask loops.
func (t *topk) push(key uint64, k int, scratch []uint64) bool {
	if key >= t.bound {
		return false
	}
	if k <= smallK {
		return t.insert(key, k)
	}
	n := len(t.buf)
	t.buf = t.buf[:n+1] // within capacity: compacted below when full
	t.buf[n] = key
	if n+1 < cap(t.buf) {
		return false
	}
	return t.compact(k, scratch)
}

// insert is push for k <= smallK: a sorted list of at most k keys.
func (t *topk) insert(key uint64, k int) bool {
	b := t.buf
	n := len(b)
	if n < k {
		b = b[:n+1]
	} else {
		n-- // drop the current k-th
	}
	i := n
	for i > 0 && b[i-1] > key {
		b[i] = b[i-1]
		i--
	}
	b[i] = key
	t.buf = b
	if len(b) == k {
		t.bound = b[k-1]
		return true
	}
	return false
}

// compact keeps the k smallest of a full buffer and tightens the bound.
func (t *topk) compact(k int, scratch []uint64) bool {
	t.bound = radixSelect(t.buf, k, scratch)
	t.buf = t.buf[:k]
	return true
}

// thrF is the float pre-filter threshold matching t.bound.
func (t *topk) thrF() float32 {
	b := t.watchBound(t.bound)
	if b == math.MaxUint64 {
		return posInf
	}
	return knnkey.Dist(b)
}

// flush writes the (at most k) nearest candidates in ascending key order
// into ids/dist (len k), padding with id −1 and pad distance. ip negates the
// internal distance back to an inner product.
func (t *topk) flush(k int, ids []int32, dist []float32, ip bool, pad float32, scratch []uint64) {
	b := t.buf
	if len(b) > k {
		radixSelect(b, k, scratch)
		b = b[:k]
	}
	radixSort(b, scratch)
	for i, key := range b {
		ids[i], dist[i] = knnkey.Output(key, ip)
	}
	for i := len(b); i < len(ids); i++ {
		ids[i], dist[i] = -1, pad
	}
	t.buf = t.buf[:0]
}

// radixSelect rearranges a (distinct keys, len(a) >= k >= 1; scratch at
// least len(a) long) so that a[:k] holds the k smallest keys (a[k:] is
// clobbered and may hold duplicates afterwards), and returns the
// k-th smallest. Each round is one MSD radix pass on the 8 bits just below
// the highest bit in which the range's keys differ (a histogram and a
// branch-free scatter, so data-dependent branches cannot mispredict), then
// continues inside the bucket that holds the k-th key; ranges of at most 48
// keys are finished by insertion sort. O(len(a)) per call in practice.
func radixSelect(a []uint64, k int, scratch []uint64) uint64 {
	lo, hi := 0, len(a) // active range; a[:lo] is already among the k smallest
	for hi-lo > 48 {
		r := a[lo:hi]
		and, or := r[0], r[0]
		for _, x := range r {
			and &= x
			or |= x
		}
		diff := and ^ or
		if diff == 0 {
			break
		}
		shift := uint(max(bits.Len64(diff)-8, 0))
		var cnt [256]int32
		for _, x := range r {
			cnt[(x>>shift)&255]++
		}
		need := int32(k - lo)
		var off [256]int32
		var cum, b int32
		for d := 0; d < 256; d++ {
			off[d] = cum
			if cum < need && cum+cnt[d] >= need {
				b = int32(d)
			}
			cum += cnt[d]
		}
		s := scratch[:len(r)]
		for _, x := range r {
			d := (x >> shift) & 255
			s[off[d]] = x
			off[d]++
		}
		start := off[b] - cnt[b] // bucket b after the scatter: [start, off[b])
		copy(r[:off[b]], s[:off[b]])
		lo, hi = lo+int(start), lo+int(off[b])
	}
	// Insertion sort the remaining range; a[k-1] is then the k-th smallest.
	for i := lo + 1; i < hi; i++ {
		v := a[i]
		j := i
		for j > lo && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
	return a[k-1]
}

// radixKth returns the k-th smallest of the distinct keys a (len(a) >= k >=
// 1) without rearranging a; scratch must be at least len(a) long. It is
// radixSelect's search with a cheaper round: after the histogram only the
// keys of the bucket that holds the k-th are kept (a branch-free filter
// into scratch, where the next round continues) instead of scattering
// every key into its bucket. For the speculative watch caps (k ≈ 7 % of a
// 2 048-key sample) it takes 8.4 µs against radixSelect's 11.0
// (BenchmarkSpecSelect*); initSpec goes through specKth, 2.6 µs.
func radixKth(a []uint64, k int, scratch []uint64) uint64 {
	r := a
	for len(r) > 48 {
		and, or := r[0], r[0]
		for _, x := range r {
			and &= x
			or |= x
		}
		diff := and ^ or
		if diff == 0 {
			return r[0] // all equal (not for distinct keys, kept total)
		}
		shift := uint(max(bits.Len64(diff)-8, 0))
		var cnt [256]int32
		for _, x := range r {
			cnt[(x>>shift)&255]++
		}
		var cum int32
		b := uint64(0)
		for ; b < 255 && cum+cnt[b] < int32(k); b++ {
			cum += cnt[b]
		}
		k -= int(cum)
		// Branch-free filter into scratch (r may alias it in later rounds:
		// the write index never passes the read one).
		s := scratch[:len(r)]
		j := 0
		for _, x := range r {
			s[j] = x
			if (x>>shift)&255 == b {
				j++
			}
		}
		r = s[:j]
	}
	s := scratch[:len(r)]
	copy(s, r)
	insertionSort(s)
	return s[k-1]
}

// radixSort sorts a ascending: an LSD radix sort on the bytes of the
// distance half (high 32 bits) that vary, then insertion sort of each run of
// equal distances by the whole key (ties are rare, so this is one linear
// pass). scratch must be at least len(a) long.
func radixSort(a []uint64, scratch []uint64) {
	n := len(a)
	if n <= 48 {
		insertionSort(a)
		return
	}
	var hist [4][256]int32
	and, or := a[0], a[0]
	for _, x := range a {
		and &= x
		or |= x
		hist[0][(x>>32)&255]++
		hist[1][(x>>40)&255]++
		hist[2][(x>>48)&255]++
		hist[3][x>>56]++
	}
	diff := (and ^ or) >> 32
	src, dst := a, scratch[:n]
	for byteI := uint(0); byteI < 4; byteI++ {
		if (diff>>(8*byteI))&255 == 0 {
			continue
		}
		h := &hist[byteI]
		var cum int32
		for d := range h {
			c := h[d]
			h[d] = cum
			cum += c
		}
		shift := 32 + 8*byteI
		for _, x := range src {
			d := (x >> shift) & 255
			dst[h[d]] = x
			h[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	// Order equal-distance runs by index.
	for i := 0; i < n-1; {
		j := i + 1
		for j < n && a[j]>>32 == a[i]>>32 {
			j++
		}
		switch {
		case j-i > 32: // many ties (duplicates, collapsed embeddings)
			slices.Sort(a[i:j])
		case j-i > 1:
			insertionSort(a[i:j])
		}
		i = j
	}
}

func insertionSort(a []uint64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for j > 0 && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}
