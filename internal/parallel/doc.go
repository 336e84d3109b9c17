// Package parallel runs independent blocks of work on a fixed number of
// goroutines. It is the one place where dmlbench's kernels (exact k-NN,
// k-means assignment, DBSCAN neighbourhoods, pairwise sums) fan out over
// CPU cores, so cancellation, worker scratch space and error reporting
// behave the same everywhere.
//
// Blocks are handed out in increasing order from an atomic counter. A
// worker owns its scratch space for its whole life, so kernels allocate
// per worker, not per block. Results that must be deterministic are
// written per block by the caller and combined in block order afterwards;
// the schedule itself is not deterministic.
package parallel
