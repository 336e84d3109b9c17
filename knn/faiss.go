//go:build faiss

package knn

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dmlbench/dmlbench/knn/faissc"
)

// FaissCompiled reports whether this binary was built with -tags faiss.
const FaissCompiled = true

func init() {
	Backends["faiss"] = func() (Searcher, error) { return Faiss{}, nil }
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
//   - Tie order: faiss returns equal distances in heap order, not by id.
//     Every run of equal distances in a returned list is re-sorted by
//     ascending id. At the cut-off, faiss's scan keeps the candidate seen
//     first (lowest id) among equal distances (its heap and reservoir only
//     admit strictly better values), so the kept set also follows the
//     lower-index rule; tests check both on tie-heavy integer data.
//   - Distances are faiss's float32 values: for ≥ 20 queries per batch
//     faiss uses BLAS and ‖q‖² + ‖x‖² − 2⟨q,x⟩ (clamped at 0) for L2, so
//     they can differ from Exact's in the last bits; neighbour ids agree
//     wherever the true distances differ by more than that rounding.
//   - Fewer than k candidates: ID −1 and distance 0, as BruteForce.
//
// Threads (Options.Threads, <= 0: GOMAXPROCS) sets OpenMP's and OpenBLAS's
// thread counts for the call. Cancellation is checked between batches.
type Faiss struct {
	// BatchBytes bounds the per-batch result buffers; 0 means 64 MiB.
	BatchBytes int
}

// Name implements Searcher.
func (Faiss) Name() string { return "faiss" }

const (
	faissDefaultBatchBytes = 64 << 20
	faissMaxBatch          = 4096 // faiss's own BLAS query block
	faissMinBatch          = 32   // ≥ 20 keeps faiss on its BLAS path
)

// batchRows is the number of queries per faiss call for depth kk.
func batchRows(kk, nq, budget int) int {
	if budget <= 0 {
		budget = faissDefaultBatchBytes
	}
	b := budget / (kk * 12)
	b = max(min(b, faissMaxBatch), faissMinBatch)
	return max(min(b, nq), 1)
}

// Search implements Searcher.
func (f Faiss) Search(ctx context.Context, q, db Matrix, k int, opt Options) (*Neighbors, error) {
	if err := Validate(q, db, k, opt); err != nil {
		return nil, err
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
	defer idx.Free()
	idx.SetThreads(opt.Threads)
	if err := idx.Add(db.Data); err != nil {
		return nil, err
	}
	return f.searchIndex(ctx, idx, q, db.Rows, k, opt)
}

// searchIndex runs the batched search of q against a filled index of n rows
// and applies the Neighbors contract.
func (f Faiss) searchIndex(ctx context.Context, idx searchIntoer, q Matrix, n, k int, opt Options) (*Neighbors, error) {
	self := opt.Exclude == ExcludeSelf
	kk := k
	if self {
		kk++
	}
	kk = min(kk, n) // faiss would only pad with -1 beyond n
	out := &Neighbors{N: q.Rows, K: k, IDs: make([]int32, q.Rows*k), Dist: make([]float32, q.Rows*k)}
	if q.Rows == 0 {
		return out, nil
	}
	batch := batchRows(kk, q.Rows, f.BatchBytes)
	dist := make([]float32, batch*kk)
	lab := make([]int64, batch*kk)
	d := q.Cols
	for i0 := 0; i0 < q.Rows; i0 += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nb := min(batch, q.Rows-i0)
		if err := idx.SearchInto(q.Data[i0*d:(i0+nb)*d], int64(kk), dist[:nb*kk], lab[:nb*kk]); err != nil {
			return nil, err
		}
		for r := 0; r < nb; r++ {
			i := i0 + r
			fillRow(out.IDs[i*k:(i+1)*k], out.Dist[i*k:(i+1)*k], lab[r*kk:(r+1)*kk], dist[r*kk:(r+1)*kk], i, self)
		}
		if opt.Progress != nil {
			opt.Progress(i0+nb, q.Rows)
		}
	}
	return out, nil
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
// distance) into the contract's row: equal-distance runs re-sorted by id,
// the query's own id dropped under self-exclusion (else the last entry),
// int32 ids, -1/0 padding.
func fillRow(ids []int32, dst []float32, lab []int64, dist []float32, self int, exclude bool) {
	// Faiss pads with id -1 only past the candidates; keep the valid prefix.
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
	t := 0
	skipped := !exclude
	for j := 0; j < m && t < len(ids); j++ {
		if !skipped && lab[j] == int64(self) {
			skipped = true
			continue
		}
		ids[t], dst[t] = int32(lab[j]), dist[j]
		t++
	}
	for ; t < len(ids); t++ {
		ids[t], dst[t] = -1, 0
	}
}
