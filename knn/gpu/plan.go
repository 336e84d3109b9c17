package gpu

import "fmt"

// plan fixes the shapes of one search: how many queries share the device
// state at a time (a query block), the candidate buffer capacity, and the
// database tiles streamed through the distance kernel. The device run and
// the CPU emulation execute the same plan.
//
// Device memory is bounded by
//
//	4·D·(M + N) + 4·(M + N)             query and database rows, norms
//	+ qb·(8·k + 8·C + 16 [+ 8·S])       top-k keys, candidate buffers, counters
//	                                    [merge scratch when 8·S > 48 KiB]
//	+ 20·W + 4·qb                       watch lists of the block (Options.Watch)
//
// for M queries, N database rows, qb queries per block, capacity C and W
// watched (query, row) pairs: never an M×N or N×N matrix. Distances live
// only in registers; a candidate is written only when it beats its query's
// current k-th key.
type plan struct {
	k        int   // output width (top-k slots per query)
	capacity int   // candidate buffer C per query, ≥ 2k
	qb       int   // queries per block
	tiles    []int // database tile lengths, summing to N
	sortLen  int   // S = 2^⌈log2(k + C)⌉ slots of the merge's bitonic sort
	scratch  bool  // the sort runs in device memory (S·8 bytes > smemSort)
}

// smemSort is the shared memory a merge block may use without opting in to
// more (48 KiB on every CUDA GPU).
const smemSort = 48 << 10

// Defaults of newPlan.
const (
	minCapacity  = 1024      // keeps the first tiles long for small k
	maxTile      = 1 << 16   // longest database tile per distance launch
	defaultState = 1 << 30   // bytes of per-query state on the device
	blockAlign   = 64        // query blocks are multiples of the kernel's 64 rows
	maxK         = 1 << 20   // top-k slots per query (state grows as 24·k bytes)
	maxRows      = 1<<31 - 1 // indices are int32
)

// newPlan returns the plan for m queries against n database rows, keeping
// the per-query state within stateBytes (0 = 1 GiB).
//
// Tile lengths grow geometrically: the first tile is C rows, so every
// candidate of it fits its buffer; afterwards a tile is at most as long as
// everything seen before it, so that on exchangeable data the expected
// number of candidates that beat the current k-th key is at most about k ≤
// C/2 per query. Adversarial orders (a database sorted by decreasing
// distance) can still overflow a buffer: the search then re-runs that tile
// for the overflowing queries only (see search.go), which is slower but
// exact.
func newPlan(m, n, k int, capacity, stateBytes int64) (plan, error) {
	if k > maxK {
		return plan{}, fmt.Errorf("gpu: k = %d exceeds the GPU backend's limit %d", k, maxK)
	}
	if n > maxRows || m > maxRows {
		return plan{}, fmt.Errorf("gpu: %d queries × %d rows exceed the int32 index range", m, n)
	}
	p := plan{k: k}
	c := capacity
	if c <= 0 {
		c = max(2*int64(k), minCapacity)
	}
	p.capacity = int(max(c, 2*int64(k)))
	if stateBytes <= 0 {
		stateBytes = defaultState
	}
	p.sortLen = 1
	for p.sortLen < p.k+p.capacity {
		p.sortLen <<= 1
	}
	p.scratch = 8*p.sortLen > smemSort
	per := p.perQuery()
	qb := stateBytes / per
	if qb < blockAlign {
		qb = blockAlign
	}
	qb = qb / blockAlign * blockAlign
	p.qb = int(min(qb, int64((m+blockAlign-1)/blockAlign*blockAlign)))
	p.qb = max(p.qb, blockAlign)
	seen := 0
	for seen < n {
		t := p.capacity
		if seen > 0 {
			t = min(max(seen, p.capacity), maxTile)
		}
		t = min(t, n-seen)
		p.tiles = append(p.tiles, t)
		seen += t
	}
	return p, nil
}

// stateBytes is the per-block device state of the plan (the middle line of
// the bound above).
func (p plan) stateBytes() int64 { return int64(p.qb) * p.perQuery() }

func (p plan) perQuery() int64 {
	b := int64(8*p.k + 8*p.capacity + 16)
	if p.scratch {
		b += 8 * int64(p.sortLen)
	}
	return b
}
