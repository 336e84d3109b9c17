//go:build faiss

package knn

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn/faissc"
)

// FaissCompiled reports whether this binary was built with -tags faiss.
const FaissCompiled = true

func init() {
	Backends.Register(FaissName, Backend{
		Summary: "faiss IndexFlat on CPU (" + FaissVersion() + ")",
		New:     func() (Searcher, error) { return Faiss{}, nil },
	})
}

// FaissVersion describes the faiss library this binary is linked with, e.g.
// "faiss 1.7.3-2+b1 (libfaiss_c: /usr/local/lib/libfaiss_c.so)" (see
// faissc.Version), for `dmlbench version`.
func FaissVersion() string { return faissc.Version() }

// ErrFaiss is wrapped by every error that faiss itself reported.
var ErrFaiss = faissc.ErrFaiss

// Faiss is the exact k-NN Searcher backed by faiss's IndexFlatL2 /
// IndexFlatIP (CPU). It honours the package contract (see doc.go) exactly
// like Exact:
//
//   - Batching: queries are searched in batches whose result buffers (k
//     float32 distances + k int64 ids per query) stay under BatchBytes, and
//     ids are converted to int32 batch by batch, so 60 000 queries at
//     k = 1000 need 12 KB per query per batch instead of 720 MB at once.
//   - Self-exclusion by index: with ExcludeSelf it searches k+1, drops the
//     entry whose id is the query's own index, and drops the last entry
//     when the own id is not among the k+1 (duplicates at distance 0 may
//     push it out).
//   - Tie order: faiss orders equal distances as its heap leaves them,
//     and at the cut-off it may keep a higher id than a tied lower one
//     (its IP min-heap evicts the lower id among ties; seen on tie-heavy
//     data). So every run of equal distances in a returned list is
//     re-sorted by ascending id, and each query is searched one deeper
//     than it needs: when that sentinel entry ties with the k-th kept
//     distance, the tie run may continue beyond the list and the query is
//     searched again at doubled depth (up to all rows) until the run ends
//     inside the list. Then the kept ids are the lowest-indexed of the tie,
//     exactly as Exact. Continuous embeddings almost never re-search;
//     integer data with massive ties may re-search most queries.
//   - Distances are faiss's float32 values from its BLAS path (sgemm, and
//     ‖q‖² + ‖x‖² − 2⟨q,x⟩ clamped at 0 for L2; calls with fewer than 20
//     queries are padded so they take that path too). They can differ from
//     Exact's in the last bits (measured ≤ 5e-7 on unit vectors); neighbour
//     ids agree wherever the true distances differ by more than 1e-6.
//   - Fewer than k candidates: ID −1 and distance +Inf (L2) / −Inf (IP).
//
// Threads (Options.Threads, <= 0: GOMAXPROCS) sets OpenMP's and OpenBLAS's
// thread counts for the call. Cancellation is checked between batches.
type Faiss struct {
	// BatchBytes bounds the per-batch result buffers; 0 means 64 MiB.
	BatchBytes int
}

// Name implements Searcher.
func (Faiss) Name() string { return FaissName }

const (
	faissDefaultBatchBytes = 64 << 20
	faissMaxBatch          = 4096 // faiss's own BLAS query block
	faissMinBatch          = 32
	// faissBLASRows is faiss's distance_compute_blas_threshold: with fewer
	// queries in one call faiss switches to a scalar loop whose float32
	// sums round differently (errors up to ~1e-6 at d = 128 instead of
	// ~5e-7). Smaller calls are padded up to it so every query takes the
	// same numerical path whatever the batching.
	faissBLASRows = 20
)

// batchRows is the number of queries per faiss call for depth kk: result
// buffers under budget bytes, at least faissMinBatch, at most faissMaxBatch,
// and balanced so that the last batch is not a small remainder.
func batchRows(kk, nq, budget int) int {
	if budget <= 0 {
		budget = faissDefaultBatchBytes
	}
	b := budget / (kk * 12)
	b = max(min(b, faissMaxBatch), faissMinBatch)
	if b >= nq {
		return max(nq, 1)
	}
	nb := (nq + b - 1) / b
	return (nq + nb - 1) / nb
}

// Search implements Searcher.
func (f Faiss) Search(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*Neighbors, error) {
	idx, err := faissIndexFor(ctx, q, db, k, opt)
	if err != nil {
		return nil, err
	}
	defer idx.Free()
	return f.searchIndex(ctx, idx, q, db.Rows, k, opt)
}

// faissIndexFor validates a search and returns a CPU flat index holding db
// (the caller frees it).
func faissIndexFor(ctx context.Context, q, db mat32.Matrix, k int, opt Options) (*faissc.Index, error) {
	if err := Validate(q, db, k, opt); err != nil {
		return nil, err
	}
	if opt.SelfRange {
		return nil, fmt.Errorf("%w: the faiss backend has no self-exclusion offset", ErrBadInput)
	}
	if db.Rows > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d database rows exceed the int32 id range", ErrBadInput, db.Rows)
	}
	if db.Cols == 0 {
		return nil, fmt.Errorf("%w: zero-dimensional rows", ErrBadInput)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx, err := faissc.NewIndexFlat(db.Cols, faissMetric(opt.Metric))
	if err != nil {
		return nil, err
	}
	idx.SetThreads(opt.Threads)
	if err := idx.Add(db.Data); err != nil {
		idx.Free()
		return nil, err
	}
	return idx, nil
}

// searchIndex runs the batched search of q against a filled index of n rows
// and applies the Neighbors contract.
func (f Faiss) searchIndex(ctx context.Context, idx searchIntoer, q mat32.Matrix, n, k int, opt Options) (*Neighbors, error) {
	out := &Neighbors{N: q.Rows, K: k, IDs: make([]int32, q.Rows*k), Dist: make([]float32, q.Rows*k)}
	if q.Rows == 0 {
		return out, nil
	}
	self := opt.Exclude == ExcludeSelf
	depth := k + 1 // + 1 sentinel to detect a tie run crossing the cut-off
	if self {
		depth++
	}
	pad := float32(math.Inf(1))
	if opt.Metric == IP {
		pad = float32(math.Inf(-1))
	}
	pr := &faissProgress{fn: opt.Progress, total: q.Rows}
	pending, err := f.searchPass(ctx, idx, q, nil, n, k, min(depth, n), self, pad, out, pr)
	for err == nil && len(pending) > 0 {
		depth *= 2
		pending, err = f.searchPass(ctx, idx, q, pending, n, k, min(depth, n), self, pad, out, pr)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

type faissProgress struct {
	fn          func(done, total int)
	done, total int
}

func (p *faissProgress) add(n int) {
	if p.fn != nil && n > 0 {
		p.done += n
		p.fn(p.done, p.total)
	}
}

// searchPass searches the query rows listed in rows (nil: all) at depth kk,
// writes the resolved ones into out and returns those whose tie run at the
// cut-off reaches the end of the list (only possible while kk < n).
func (f Faiss) searchPass(ctx context.Context, idx searchIntoer, q mat32.Matrix, rows []int, n, k, kk int,
	self bool, pad float32, out *Neighbors, pr *faissProgress) ([]int, error) {
	nq := q.Rows
	if rows != nil {
		nq = len(rows)
	}
	d := q.Cols
	batch := batchRows(kk, nq, f.BatchBytes)
	rowsCap := max(batch, faissBLASRows)
	dist := make([]float32, rowsCap*kk)
	lab := make([]int64, rowsCap*kk)
	gather := make([]float32, rowsCap*d) // gathered or padded query rows
	var pending []int
	for b0 := 0; b0 < nq; b0 += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nb := min(batch, nq-b0)
		var qb []float32
		if rows == nil && nb >= faissBLASRows {
			qb = q.Data[b0*d : (b0+nb)*d]
		} else {
			for r := 0; r < nb; r++ {
				src := b0 + r
				if rows != nil {
					src = rows[src]
				}
				copy(gather[r*d:(r+1)*d], q.Row(src))
			}
			ns := nb
			for ; ns < faissBLASRows; ns++ { // pad with copies of the first row
				copy(gather[ns*d:(ns+1)*d], gather[:d])
			}
			qb = gather[:ns*d]
		}
		ns := len(qb) / d
		if err := idx.SearchInto(qb, int64(kk), dist[:ns*kk], lab[:ns*kk]); err != nil {
			return nil, err
		}
		resolved := 0
		for r := 0; r < nb; r++ {
			i := b0 + r
			if rows != nil {
				i = rows[i]
			}
			if fillRow(out.IDs[i*k:(i+1)*k], out.Dist[i*k:(i+1)*k], lab[r*kk:(r+1)*kk], dist[r*kk:(r+1)*kk], i, self, kk >= n, pad) {
				resolved++
			} else {
				pending = append(pending, i)
			}
		}
		pr.add(resolved)
	}
	return pending, nil
}

// faissMetric maps a (validated) Metric to faiss's MetricType.
func faissMetric(m Metric) faissc.Metric {
	if m == IP {
		return faissc.InnerProduct
	}
	return faissc.L2
}

// searchIntoer is the part of faissc.Index (CPU or GPU) that Search needs.
type searchIntoer interface {
	SearchInto(v []float32, k int64, dist []float32, labels []int64) error
}

// fillRow converts one faiss result list (ids lab, distances dist, sorted by
// distance; lab and dist are reordered in place) into the contract's row:
// equal-distance runs re-sorted by id, the query's own id dropped under
// self-exclusion (if it is not in the list, the extra entry at the end
// goes instead), int32 ids, padding with id -1 and distance pad. It reports
// false when the list cannot prove the kept set right: the first entry
// after the k kept ones ties with the k-th, and the list does not hold
// every row (complete).
func fillRow(ids []int32, dst []float32, lab []int64, dist []float32, self int, exclude, complete bool, pad float32) bool {
	// Faiss pads with id -1 only past the last row.
	m := len(lab)
	for m > 0 && lab[m-1] < 0 {
		m--
	}
	lab, dist = lab[:m], dist[:m]
	for a := 0; a < m; {
		b := a + 1
		for b < m && dist[b] == dist[a] {
			b++
		}
		if b-a > 1 {
			slices.Sort(lab[a:b])
		}
		a = b
	}
	k := len(ids)
	t := 0
	skipped := !exclude
	j := 0
	for ; j < m && t < k; j++ {
		if !skipped && lab[j] == int64(self) {
			skipped = true
			continue
		}
		ids[t], dst[t] = int32(lab[j]), dist[j]
		t++
	}
	for r := t; r < k; r++ {
		ids[r], dst[r] = -1, pad
	}
	if complete || t < k {
		return true
	}
	// Sentinel: the next entry that is not the query itself.
	for ; j < m; j++ {
		if !skipped && lab[j] == int64(self) {
			skipped = true
			continue
		}
		return dist[j] != dst[k-1]
	}
	return false // no sentinel in the list: cannot tell
}
