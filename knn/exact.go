package knn

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/dmlbench/dmlbench/internal/knnkey"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/parallel"
)

// Exact is the default pure-Go exact searcher: a blocked float32 distance
// computation (packed query tiles × packed database panels through a
// register-blocked 6×16 or 6×32 micro-kernel, AVX-512 or AVX2+FMA assembly
// when the CPU has it;
// see KernelName) fused with a per-query bounded top-k. It never forms an
// N×M distance matrix: memory is the packed database (one copy of db), the
// output (N·k ids and distances) and per-query candidate buffers of k keys
// (k <= 32) or 2k–3k keys (per tile of queries, or for every query on the
// symmetric path below). Work is split over Options.Threads goroutines by
// query tile; Progress is called (serialised) as tiles finish and ctx is
// checked between tiles. Database rows are streamed panel by panel; for
// D much above 512 a panel no longer fits in L1 and throughput drops.
//
// Distances. IP is the plain inner product. L2 uses the norm expansion
//
//	‖q − x‖² = ‖q‖² + ‖x‖² − 2 q·x      (clamped at 0)
//
// with the norms accumulated in float64 and q·x in float32. This is the
// formula every GEMM-based k-NN library uses (faiss IndexFlatL2 included); it
// is exact for small integer data but loses absolute precision of order
// 2^-23·(‖q‖² + ‖x‖²) against BruteForce's float64 direct differences, so two
// neighbours closer than that may swap order and very small distances are
// noisy. Results are nevertheless deterministic: every (query, item) pair is
// computed by the same instruction sequence whatever the tiling and thread
// count, and ties (equal float32 distances) go to the lower database index.
//
// Symmetric path. When q and db are the same matrix (same backing array and
// shape; the usual leave-one-out evaluation) each off-diagonal tile pair is
// computed once and offered both to its rows and to its columns, halving the
// arithmetic; it gives bit-identical output to the general path (the
// micro-kernel's accumulation is symmetric in its two operands). It keeps a
// candidate buffer for every query, so it is used only while those buffers
// fit in MaxStateBytes, and only for k <= 512 (see symMaxK).
//
// Inputs containing NaN give unspecified neighbour lists (NaN distances
// never enter a list); validate data first (fixtures does).
type Exact struct {
	// TileQ is the number of query rows per work item (rounded up to a
	// multiple of 48); 0 picks a size whose packed tile fits in ~128 KiB of
	// L2 (240 rows for D = 128).
	TileQ int
	// NoSymmetry forces the general path even when q and db are the same
	// matrix (for benchmarks and tests).
	NoSymmetry bool
	// MaxStateBytes caps the candidate buffers of the symmetric path
	// (8 bytes per candidate, about 2k per query); 0 means 256 MiB. Beyond
	// it the general path runs, whose buffers are per tile: for large k the
	// top-k work dominates, so halving the arithmetic is not worth a
	// buffer per query (SOP, k = 1000: ~1 GB).
	MaxStateBytes int64
	// NoKSpec turns off the speculative top-k bound (see initKSpec), for
	// benchmarks and tests; the neighbours are the same either way.
	NoKSpec bool

	kernel *kernelImpl // nil = activeKernel(); tests pin other kernels
	// spec (nil = defaultSpecParams()) sets the watch's speculative cap and
	// recounts, when non-nil, counts the queries ranked again because
	// their cap was never proven; tests use both.
	spec     *specParams
	recounts *atomic.Int64
}

// Name implements Searcher.
func (Exact) Name() string { return ExactName }

// Watches reports that Exact honours Options.Watch.
func (Exact) Watches() bool { return true }

// WatchesExactly reports that Exact honours Watch.Band and Watch.Order.
func (Exact) WatchesExactly() bool { return true }

// SelfOffsets reports that Exact honours Options.SelfRange.
func (Exact) SelfOffsets() bool { return true }

// exactRun holds what every worker of one Search shares.
type exactRun struct {
	q, db    mat32.Matrix
	k        int // requested k (output width)
	keff     int // min(k, candidates per query): buffers select keff
	capacity int // candidate buffer capacity per query
	excl     bool
	self     int // Options.SelfOffset: query i is database row self+i
	ip       bool
	pad      float32 // distance of −1 slots
	kern     kernelFunc
	nr       int // the kernel's panel width (16 or 32)
	d        int // dimension
	npan     int // database panels of nr items
	bpack    []float32
	nq, nx   []float32
	scale    [8]float32
	lo       [8]float32
	noCol    []float32 // nr × −Inf: column thresholds that never pass
	out      *Neighbors
	threads  int
	watch    []watchState // per query, with Options.Watch
	watchOpt *Watch
	kspec    []uint64 // per query: speculative top-k bound (see initKSpec), or nil
	noKSpec  bool
	maxRank  int
	spec     specParams
	recounts *atomic.Int64

	pmu      sync.Mutex
	done     int
	progress func(done, total int)
}

// Search implements Searcher.
func (e Exact) Search(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*Neighbors, error) {
	if err := Validate(q, db, k, opt); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Neighbors{N: q.Rows, K: k, IDs: make([]int32, q.Rows*k), Dist: make([]float32, q.Rows*k)}
	if q.Rows == 0 {
		return out, nil
	}
	r := &exactRun{q: q, db: db, k: k, excl: opt.Exclude == ExcludeSelf, self: opt.SelfOffset, ip: opt.Metric == IP,
		d: q.Cols, out: out, progress: opt.Progress, spec: defaultSpecParams(), recounts: e.recounts, noKSpec: e.NoKSpec}
	if e.spec != nil {
		r.spec = *e.spec
	}
	cand := db.Rows
	if r.excl {
		cand--
	}
	r.keff = min(k, cand)
	r.pad = posInf
	r.scale, r.lo = fill8(-2), fill8(0)
	if r.ip {
		r.pad = negInf
		r.scale, r.lo = fill8(-1), fill8(negInf)
	}
	impl := e.kernel
	if impl == nil {
		ki := activeKernel()
		impl = &ki
	}
	r.kern, r.nr = impl.fn, impl.nr
	nr := r.nr
	r.threads = parallel.Threads(opt.Threads)
	r.noCol = make([]float32, nrMax)
	for i := range r.noCol {
		r.noCol[i] = negInf
	}
	if r.keff == 0 { // a one-row database with self-exclusion: nothing to find
		if opt.Watch != nil {
			out.Ranks = make([][]int32, q.Rows)
		}
		for i := range out.IDs {
			out.IDs[i], out.Dist[i] = -1, r.pad
		}
		if opt.Progress != nil {
			opt.Progress(q.Rows, q.Rows)
		}
		return out, nil
	}

	tile := e.TileQ
	if tile <= 0 {
		tile = (128 << 10) / (4 * max(r.d, 1))
	}
	// Tiles hold whole 6-row query blocks and whole nr-item panels.
	step := mr * nr / gcd(mr, nr)
	tile = min(max((tile+step-1)/step*step, step), (1<<20)/step*step)

	same := sameMatrix(q, db)
	symCap, symOK := 0, false
	if same && !e.NoSymmetry && q.Rows > tile && r.keff <= symMaxK {
		symCap, symOK = e.symCapacity(r, q.Rows)
	}

	// Pack the database once: panels of nr items, item j of a panel in lane j.
	r.npan = (db.Rows + nr - 1) / nr
	r.bpack = alignedFloats(r.npan * nr * r.d)
	parallel.For(r.threads, r.npan, func(p int) {
		packPanel(r.bpack[p*nr*r.d:], db, p*nr, nr)
	})
	if r.ip {
		r.nx = make([]float32, r.npan*nr)
	} else {
		r.nx = sqNorms(db, r.npan*nr)
	}

	var err error
	initWatch := func() {
		if opt.Watch != nil {
			r.maxRank = opt.Watch.MaxRank
			r.initWatch(opt.Watch)
		}
		r.initKSpec()
	}
	if symOK {
		r.capacity = symCap
		nb := (q.Rows + tile - 1) / tile
		r.nq = r.nx[:len(r.nx):len(r.nx)]
		if len(r.nq) < nb*tile {
			r.nq = append(r.nq, make([]float32, nb*tile-len(r.nq))...)
		}
		initWatch()
		err = r.runSymmetric(ctx, tile)
	} else {
		r.capacity = r.capFor(r.keff, false)
		nt := (q.Rows + tile - 1) / tile
		switch {
		case r.ip:
			r.nq = make([]float32, nt*tile)
		case same:
			r.nq = append(r.nx[:len(r.nx):len(r.nx)], make([]float32, max(0, nt*tile-len(r.nx)))...)
		default:
			r.nq = sqNorms(q, nt*tile)
		}
		initWatch()
		err = r.runTiles(ctx, tile)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// symCapacity is the candidate buffer capacity per query of the symmetric
// path, which keeps one buffer for each of the rows queries at once, and
// whether the state budget (MaxStateBytes, default 256 MiB) allows the
// path at all: the full capFor(k, true), else, for k > smallK, as many as
// the budget holds when that is at least k + max(k/4, 16).
func (e Exact) symCapacity(r *exactRun, rows int) (int, bool) {
	budget := e.MaxStateBytes
	if budget <= 0 {
		budget = 256 << 20
	}
	per := budget / (8 * int64(rows)) // candidates per query the budget allows
	want := int64(r.capFor(r.keff, true))
	if per >= want {
		return int(want), true
	}
	if r.keff > smallK && per >= int64(r.keff+max(r.keff/4, 16)) {
		return int(per), true
	}
	return 0, false
}

// symMaxK is the largest k for which the symmetric path is used: beyond it
// the top-k work dominates and column updates (scattered over a whole block
// of queries) cost more than the halved arithmetic saves (measured: 20 000 ×
// 128, k = 1000: symmetric 5.2 s CPU vs general 4.7 s; k = 300: 3.0 vs 3.3).
const symMaxK = 512

// capFor is the candidate buffer capacity for k: k itself for the sorted
// insertion list (k <= smallK), else 2k (symmetric path, one buffer per
// query) or 3k (general path, buffers per tile only).
func (r *exactRun) capFor(k int, sym bool) int {
	switch {
	case k <= smallK:
		return k
	case sym:
		return 2 * k
	}
	return 3 * k
}

// sameMatrix reports whether a and b are the same rows (same backing array
// and shape), which enables the symmetric path.
func sameMatrix(a, b mat32.Matrix) bool {
	if a.Rows != b.Rows || a.Cols != b.Cols {
		return false
	}
	if len(a.Data) == 0 {
		return len(b.Data) == 0
	}
	return len(b.Data) > 0 && &a.Data[0] == &b.Data[0]
}

// report adds rows finished queries and calls Progress (serialised).
func (r *exactRun) report(rows int) {
	if r.progress == nil {
		return
	}
	r.pmu.Lock()
	r.done += rows
	r.progress(r.done, r.q.Rows)
	r.pmu.Unlock()
}

func (r *exactRun) flush(st *topk, qi int, scratch []uint64) {
	if r.kspec != nil && len(st.buf) < r.keff {
		// The speculative bound was too tight: fewer than keff candidates
		// lay below it. Select from every candidate instead.
		r.exactList(qi, st)
	}
	k := r.k
	st.flush(r.keff, r.out.IDs[qi*k:(qi+1)*k], r.out.Dist[qi*k:(qi+1)*k], r.ip, r.pad, scratch)
	if st.w != nil {
		st.w.drain()
		if st.w.needsRecount() {
			r.out.Ranks[qi] = r.exactRanks(qi, st.w)
		} else {
			r.out.Ranks[qi] = st.w.ranks(r.order(qi))
		}
		st.w.release()
		st.w = nil
	}
}

// attach gives query qi's (reset) state its watch counters (fresh) and
// its speculative bound, and returns its pre-filter threshold.
func (r *exactRun) attach(st *topk, qi int) float32 {
	if r.watch != nil {
		st.w = &r.watch[qi]
		st.w.reset(r.maxRank)
	}
	if r.kspec != nil {
		st.bound = r.kspec[qi]
	}
	return st.thrF()
}

// runTiles is the general path: workers take tiles of query rows and stream
// every database panel through them. The database panel (nr·D floats) stays
// in L1 while the tile's 6-row query panels (tile·D floats) come from L2.
func (r *exactRun) runTiles(ctx context.Context, tile int) error {
	n, d, nr := r.q.Rows, r.d, r.nr
	nt := (n + tile - 1) / tile
	return parallel.Blocks(ctx, r.threads, nt, func() *tileScratch { return r.newTileScratch(tile) },
		func(ts *tileScratch, t int) error {
			apack, states, thr, scratch, ep := ts.apack, ts.states, ts.thr, ts.scratch, ts.ep
			r0 := t * tile
			rows := min(tile, n-r0)
			nblk := (rows + mr - 1) / mr
			for b := 0; b < nblk; b++ {
				packPanel(apack[b*mr*d:], r.q, r0+b*mr, mr)
			}
			for i := range states {
				states[i].reset(ts.backing[i*r.capacity : (i+1)*r.capacity : (i+1)*r.capacity])
				thr[i] = negInf
				if i < rows {
					thr[i] = r.attach(&states[i], r0+i)
				}
			}
			for jp := 0; jp < r.npan; jp++ {
				bp := ptrAt(r.bpack, jp*nr*d)
				ep.nx = &r.nx[jp*nr]
				base := jp * nr
				for b := 0; b < nblk; b++ {
					i0 := b * mr
					copy(ep.nq[:mr], r.nq[r0+i0:r0+i0+mr])
					copy(ep.thr[:mr], thr[i0:i0+mr])
					r.kern(ptrAt(apack, i0*d), bp, d, ep)
					for rr := 0; rr < mr; rr++ {
						m := ep.rmask[rr]
						if m == 0 {
							continue
						}
						li := i0 + rr
						qi := r0 + li
						if qi >= n {
							break
						}
						st := &states[li]
						for ; m != 0; m &= m - 1 {
							j := bits.TrailingZeros32(m)
							id := base + j
							if id >= r.db.Rows {
								break
							}
							if r.excl && id == r.self+qi {
								continue
							}
							if st.offer(knnkey.Of(ep.c[rr*nr+j], id), r.keff, scratch) {
								thr[li] = st.thrF()
							}
						}
					}
				}
			}
			for li := 0; li < rows; li++ {
				r.flush(&states[li], r0+li, scratch)
			}
			r.report(rows)
			return nil
		})
}

// tileScratch is one runTiles worker's space: the packed query tile, the
// tile's candidate buffers and thresholds, and the kernel epilogue.
type tileScratch struct {
	apack   []float32
	backing []uint64
	scratch []uint64
	states  []topk
	thr     []float32
	ep      *kernEpi
}

func (r *exactRun) newTileScratch(tile int) *tileScratch {
	ts := &tileScratch{apack: alignedFloats(tile * r.d), backing: make([]uint64, tile*r.capacity),
		scratch: make([]uint64, r.capacity), states: make([]topk, tile), thr: make([]float32, tile), ep: new(kernEpi)}
	ts.ep.scale, ts.ep.lo = r.scale, r.lo
	ts.ep.cthr = &r.noCol[0]
	return ts
}

// ptrAt returns &s[i], or nil for an empty slice (D = 0: kernels read
// nothing).
func ptrAt(s []float32, i int) *float32 {
	if len(s) == 0 {
		return nil
	}
	return &s[i]
}

// runSymmetric is the all-vs-all path for q == db: blocks of tile rows, tile
// pairs (I, J ≥ I). A diagonal tile offers each computed pair to its row
// only (it computes both orders); an off-diagonal tile offers pair (i, j) to
// query i (row) and to query j (column). Every query's buffer thus sees
// every database row exactly once; the selected set is order independent
// because keys are distinct. Each block's buffers and thresholds are guarded
// by a mutex, taken in ascending block order (try-locks first, so workers
// skip busy blocks instead of queueing behind each other).
func (r *exactRun) runSymmetric(ctx context.Context, tile int) error {
	s := newSymRun(r, tile)
	return parallel.Blocks(ctx, r.threads, s.nb, s.newScratch,
		func(sc *symScratch, I int) error { return s.rowBlock(ctx, sc, I) })
}

// symRun is the state the workers of runSymmetric share.
type symRun struct {
	r      *exactRun
	tile   int
	n, nb  int          // queries, blocks of tile queries
	states []topk       // per query
	thr    []float32    // per query: its buffer's threshold (row and column tests)
	mus    []sync.Mutex // per block
	rem    []int        // per block: tiles still to touch it
	remMu  sync.Mutex
}

func newSymRun(r *exactRun, tile int) *symRun {
	n := r.q.Rows
	nb := (n + tile - 1) / tile
	s := &symRun{r: r, tile: tile, n: n, nb: nb, states: make([]topk, n),
		thr: make([]float32, nb*tile), // ≥ npan*nr
		mus: make([]sync.Mutex, nb), rem: make([]int, nb)}
	backing := make([]uint64, n*r.capacity)
	for i := n; i < len(s.thr); i++ {
		s.thr[i] = negInf
	}
	// Attaching builds each query's watch band: in parallel, 1 024
	// queries at a time.
	parallel.For(r.threads, (n+1023)/1024, func(c int) {
		for i := c * 1024; i < min(n, (c+1)*1024); i++ {
			s.states[i].reset(backing[i*r.capacity : (i+1)*r.capacity : (i+1)*r.capacity])
			s.thr[i] = r.attach(&s.states[i], i)
		}
	})
	for i := range s.rem {
		s.rem[i] = nb
	}
	return s
}

// symScratch is one runSymmetric worker's space.
type symScratch struct {
	apack   []float32
	ep      *kernEpi
	pending []int
	scratch []uint64
}

func (s *symRun) newScratch() *symScratch {
	r := s.r
	sc := &symScratch{apack: alignedFloats(s.tile * r.d), ep: new(kernEpi),
		pending: make([]int, 0, s.nb), scratch: make([]uint64, r.capacity)}
	sc.ep.scale, sc.ep.lo = r.scale, r.lo
	return sc
}

// rowBlock computes the tiles (I, J ≥ I) of row block I (row blocks are
// taken in increasing order), whichever pair of blocks it can lock first.
func (s *symRun) rowBlock(ctx context.Context, sc *symScratch, I int) error {
	r, d, tile, n := s.r, s.r.d, s.tile, s.n
	rowLo := I * tile
	for b := 0; b < (min(n, rowLo+tile)-rowLo+mr-1)/mr; b++ {
		packPanel(sc.apack[b*mr*d:], r.q, rowLo+b*mr, mr)
	}
	pending := sc.pending[:0]
	for J := I; J < s.nb; J++ {
		pending = append(pending, J)
	}
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		pick := s.lockPair(I, pending)
		J := pending[pick]
		s.doTile(I, J, sc.apack, sc.ep, sc.scratch)
		if J != I {
			s.mus[J].Unlock()
		}
		s.mus[I].Unlock()
		pending = append(pending[:pick], pending[pick+1:]...)
		s.finishTile(I, J, sc.scratch)
	}
	sc.pending = pending
	return nil
}

// lockPair locks block I and one pending block J (I itself for the
// diagonal tile) and returns J's position in pending: the first pair free
// now, else, waiting, the first pending pair in lock order.
func (s *symRun) lockPair(I int, pending []int) int {
	for idx, J := range pending {
		if s.mus[I].TryLock() {
			if J == I || s.mus[J].TryLock() {
				return idx
			}
			s.mus[I].Unlock()
		}
	}
	s.mus[I].Lock()
	if J := pending[0]; J != I {
		s.mus[J].Lock()
	}
	return 0
}

// finishTile counts tile (I, J) done for both blocks and flushes the
// queries of a block no tile will touch again.
func (s *symRun) finishTile(I, J int, scratch []uint64) {
	var fin []int
	s.remMu.Lock()
	s.rem[I]--
	if s.rem[I] == 0 {
		fin = append(fin, I)
	}
	if J != I {
		s.rem[J]--
		if s.rem[J] == 0 {
			fin = append(fin, J)
		}
	}
	s.remMu.Unlock()
	for _, B := range fin {
		lo, hi := B*s.tile, min(s.n, (B+1)*s.tile)
		for qi := lo; qi < hi; qi++ {
			s.r.flush(&s.states[qi], qi, scratch)
		}
		s.r.report(hi - lo)
	}
}

// doTile computes tile (I, J) with the kernel, 6-row panel by panel, and
// offers each pair that passes a threshold to its row's buffer and, off
// the diagonal, to its column's. The hot loop of the symmetric path.
func (s *symRun) doTile(I, J int, apack []float32, ep *kernEpi, scratch []uint64) {
	r, d, nr, n, tile := s.r, s.r.d, s.r.nr, s.n, s.tile
	states, thr := s.states, s.thr
	rowLo := I * tile
	nblk := (min(n, rowLo+tile) - rowLo + mr - 1) / mr
	pLo, pHi := J*tile/nr, min(r.npan, (J+1)*tile/nr)
	diag := I == J
	for jp := pLo; jp < pHi; jp++ {
		bp := ptrAt(r.bpack, jp*nr*d)
		ep.nx = &r.nx[jp*nr]
		base := jp * nr
		if diag {
			ep.cthr = &r.noCol[0]
		} else {
			ep.cthr = &thr[base]
		}
		for b := 0; b < nblk; b++ {
			i0 := rowLo + b*mr
			copy(ep.nq[:mr], r.nq[i0:i0+mr])
			copy(ep.thr[:mr], thr[i0:i0+mr])
			r.kern(ptrAt(apack, b*mr*d), bp, d, ep)
			for rr := 0; rr < mr; rr++ {
				m := ep.rmask[rr]
				if m == 0 {
					continue
				}
				qi := i0 + rr
				if qi >= n {
					break
				}
				st := &states[qi]
				for ; m != 0; m &= m - 1 {
					j := bits.TrailingZeros32(m)
					id := base + j
					if id >= n {
						break
					}
					if r.excl && id == r.self+qi {
						continue
					}
					if st.offer(knnkey.Of(ep.c[rr*nr+j], id), r.keff, scratch) {
						thr[qi] = st.thrF()
					}
				}
			}
			if diag {
				continue
			}
			for m := ep.cmask; m != 0; m &= m - 1 {
				j := bits.TrailingZeros32(m)
				qj := base + j
				if qj >= n {
					break
				}
				st := &states[qj]
				for rr := 0; rr < mr; rr++ {
					qi := i0 + rr
					if qi >= n {
						break
					}
					dv := ep.c[rr*nr+j]
					if dv <= thr[qj] && st.offer(knnkey.Of(dv, qi), r.keff, scratch) {
						thr[qj] = st.thrF()
					}
				}
			}
		}
	}
}

// gcd is the greatest common divisor of two positive ints.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
