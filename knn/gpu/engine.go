package gpu

// engine executes the kernels of one search. Two implement it: the CUDA
// driver (device.go, the kernels of kernels.cu) and the CPU emulation
// (emulate.go), which performs, query by query, exactly what the kernels
// compute: the same fused multiply-adds in the same order, the same keys,
// the same filtering, merging and watch counting. search.go drives either
// through the same plan, so the unit tests of the emulation check the whole
// algorithm and only the execution of the PTX is left to the device.
//
// State of the current query block (qb queries from q0), per query i:
//
//	top[i]  k keys, ascending, knnkey.Empty where unfilled
//	thr[i]  the admission bound: top[i][k−1] (knnkey.Empty while not full)
//	cand[i] up to C candidate keys of the current tile (unordered)
//	cnt[i]  candidates offered in the current tile (may exceed C)
//	ovf[i]  the last merge saw cnt[i] > C: the tile is re-run for query i
//	watch   sorted watched keys, per-bucket counts, alive, bound
type engine interface {
	// load copies the rows and their norms to the engine; q may alias x.
	load(p params, q []float32, m int, x []float32, n int, nq, nx []float32) error
	// begin starts the block of queries [q0, q0+qb): empty top-k lists,
	// open bounds, zero counts, and (woff != nil) the watched rows of query
	// q0+i as wids[woff[i]:woff[i+1]], whose keys it computes and sorts.
	begin(q0, qb int, woff, wids []int32) error
	// dist offers the database rows [x0, x0+xn) to every query of the block
	// (rerun: only to the flagged queries, and without watch counting).
	dist(x0, xn int, rerun bool) error
	// merge folds each query's candidates into its top-k and returns how
	// many queries overflowed their buffer (they are flagged for a re-run).
	merge(rerun bool) (int, error)
	// shrink lowers the watch bounds after a tile (no-op without a watch).
	shrink() error
	// fetch copies out the block's top-k keys (qb·k), the watch counts
	// (len(wids)) and the alive watched rows per query (qb).
	fetch(keys []uint64, wcnt, walive []int32) error
	// free releases the engine's memory.
	free()
}

// params are the per-search constants of the kernels.
type params struct {
	k, capacity, qbMax int
	d                  int
	sortLen            int  // plan.sortLen
	scratch            bool // plan.scratch
	excl               bool
	scale, lo          float32 // epilogue: D = max(lo, (nq + nx) + scale·acc)
	maxRank            int     // watch bound (0: no watch)
}
