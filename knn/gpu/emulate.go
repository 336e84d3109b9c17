package gpu

import (
	"slices"

	"github.com/dmlbench/dmlbench/internal/fma32"
	"github.com/dmlbench/dmlbench/internal/knnkey"
)

// emulator runs the kernels of kernels.cu on the CPU, one query at a time,
// with the device's arithmetic (fma32 per step, then the epilogue). It is
// slow (scalar, one core) and exists to test the algorithm without a GPU.
type emulator struct {
	p       params
	q, x    []float32
	nq, nx  []float32
	m, n    int
	q0, qb  int
	top     []uint64
	thr     []uint64
	cand    []uint64
	cnt     []int
	ovf     []bool
	woff    []int32
	wids    []int32
	wkeys   []uint64
	wcnt    []int32
	alive   []int32
	wbound  []uint64
	reverse bool // offer each tile's rows in descending order (GPU atomics give any order)
}

func (e *emulator) load(p params, q []float32, m int, x []float32, n int, nq, nx []float32) error {
	e.p, e.q, e.m, e.x, e.n, e.nq, e.nx = p, q, m, x, n, nq, nx
	e.top = make([]uint64, p.qbMax*p.k)
	e.thr = make([]uint64, p.qbMax)
	e.cand = make([]uint64, p.qbMax*p.capacity)
	e.cnt = make([]int, p.qbMax)
	e.ovf = make([]bool, p.qbMax)
	e.alive = make([]int32, p.qbMax)
	e.wbound = make([]uint64, p.qbMax)
	return nil
}

// pairDist is the distance kernel's arithmetic for (query gi, row j):
// acc = fma(q[p], x[p], acc) for p = 0..D−1, then
// D = max(lo, fma(scale, acc, nq + nx)) (NaN propagates).
func (e *emulator) pairDist(gi, j int) float32 {
	d := e.p.d
	qr := e.q[gi*d : (gi+1)*d]
	xr := e.x[j*d : (j+1)*d]
	var acc float32
	for p := range qr {
		acc = fma32.FMA(qr[p], xr[p], acc)
	}
	v := fma32.FMA(e.p.scale, acc, e.nq[gi]+e.nx[j])
	if v < e.p.lo {
		v = e.p.lo
	}
	return v
}

func (e *emulator) begin(q0, qb int, woff, wids []int32) error {
	e.q0, e.qb = q0, qb
	for i := range e.top[:qb*e.p.k] {
		e.top[i] = knnkey.Empty
	}
	for i := 0; i < qb; i++ {
		e.thr[i], e.cnt[i], e.ovf[i], e.alive[i], e.wbound[i] = knnkey.Empty, 0, false, 0, 0
	}
	e.woff, e.wids = woff, wids
	if woff == nil {
		return nil
	}
	e.wkeys = make([]uint64, len(wids))
	e.wcnt = make([]int32, len(wids))
	for i := 0; i < qb; i++ { // kernel watch_keys, then watch_sort
		lo, hi := woff[i], woff[i+1]
		for t := lo; t < hi; t++ {
			e.wkeys[t] = knnkey.Of(e.pairDist(q0+i, int(wids[t])), int(wids[t]))
		}
		slices.Sort(e.wkeys[lo:hi])
		e.alive[i] = int32(min(int(hi-lo), e.p.maxRank))
		e.setBound(i)
	}
	return nil
}

func (e *emulator) setBound(i int) {
	e.wbound[i] = 0
	if a := e.alive[i]; a > 0 {
		e.wbound[i] = e.wkeys[e.woff[i]+a-1]
	}
}

func (e *emulator) dist(x0, xn int, rerun bool) error {
	for i := 0; i < e.qb; i++ {
		if rerun && !e.ovf[i] {
			continue
		}
		gi := e.q0 + i
		for jj := 0; jj < xn; jj++ {
			j := x0 + jj
			if e.reverse {
				j = x0 + xn - 1 - jj
			}
			if e.p.excl && j == gi {
				continue
			}
			v := e.pairDist(gi, j)
			if v != v {
				continue // NaN is never a neighbour nor counted
			}
			key := knnkey.Of(v, j)
			if !rerun && key < e.wbound[i] {
				ks := e.wkeys[e.woff[i] : e.woff[i]+e.alive[i]]
				b, found := slices.BinarySearch(ks, key)
				if !found {
					e.wcnt[int(e.woff[i])+b]++
				}
			}
			if key < e.thr[i] {
				if c := e.cnt[i]; c < e.p.capacity {
					e.cand[i*e.p.capacity+c] = key
				}
				e.cnt[i]++
			}
		}
	}
	return nil
}

func (e *emulator) merge(rerun bool) (int, error) {
	k, c := e.p.k, e.p.capacity
	over := 0
	all := make([]uint64, 0, k+c)
	for i := 0; i < e.qb; i++ {
		n := e.cnt[i]
		e.ovf[i] = false
		if n == 0 {
			continue
		}
		top := e.top[i*k : (i+1)*k]
		all = append(append(all[:0], top...), e.cand[i*c:i*c+min(n, c)]...)
		slices.Sort(all)
		if rerun { // candidates may repeat rows already in the top-k
			all = slices.Compact(all)
		}
		for t := range top {
			top[t] = knnkey.Empty
			if t < len(all) {
				top[t] = all[t]
			}
		}
		e.thr[i] = top[k-1]
		if n > c {
			e.ovf[i] = true
			over++
		}
		e.cnt[i] = 0
	}
	return over, nil
}

func (e *emulator) shrink() error {
	if e.woff == nil {
		return nil
	}
	for i := 0; i < e.qb; i++ {
		off, a := e.woff[i], e.alive[i]
		tot := int32(0)
		for t := int32(0); t < a; t++ {
			tot += e.wcnt[off+t]
		}
		for a > 0 && int(a+tot) > e.p.maxRank {
			a--
			tot -= e.wcnt[off+a]
		}
		e.alive[i] = a
		e.setBound(i)
	}
	return nil
}

func (e *emulator) fetch(keys []uint64, wcnt, walive []int32) error {
	copy(keys, e.top[:e.qb*e.p.k])
	if e.woff != nil {
		copy(wcnt, e.wcnt)
		copy(walive, e.alive[:e.qb])
	}
	return nil
}

func (e *emulator) free() {}
