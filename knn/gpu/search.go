package gpu

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/knnkey"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// Searcher is the CUDA k-NN backend ("gpu"): exact brute-force search whose
// distances are bit-identical to knn.Exact's FMA micro-kernels, so the
// neighbour lists, their order and the tie rule (equal distances → lower
// index) are the same as `--backend exact`. See docs/gpu.md for the design,
// the exactness argument and the device-memory bound (plan.go).
type Searcher struct {
	// Capacity is the candidate buffer per query (0: max(2k, 1024)); it is
	// raised to 2k if smaller.
	Capacity int64
	// StateBytes caps the per-query device state of a query block (0: 1 GiB).
	StateBytes int64
	// Device describes the GPU (Available's info) for messages; the
	// backends "gpu" and "auto" set it.
	Device string

	emulate bool // run the CPU emulation instead of the device (tests)
	reverse bool // emulation: offer rows in descending order within a tile
}

// Name implements knn.Searcher and clustering.CentroidAssigner.
func (Searcher) Name() string { return "gpu" }

// NearestCentroids implements clustering.CentroidAssigner: the k-means
// behind NMI, F1 and AMI assigns on the device the search runs on
// (clustering.KMeansOn), bit-identical to the CPU kernel (NearestCentroids).
func (s Searcher) NearestCentroids(ctx context.Context, x, centroids mat32.Matrix) ([]int32, []float32, error) {
	return nearestCentroids(ctx, x, centroids, s.emulate)
}

// Watches reports that the GPU backend honours knn.Options.Watch.
func (Searcher) Watches() bool { return true }

// Search implements knn.Searcher.
func (s Searcher) Search(ctx context.Context, q, db mat32.Matrix, k int, opt knn.Options) (*knn.Neighbors, error) {
	if err := knn.Validate(q, db, k, opt); err != nil {
		return nil, err
	}
	if opt.SelfRange {
		return nil, fmt.Errorf("%w: the gpu backend has no self-exclusion offset", knn.ErrBadInput)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &knn.Neighbors{N: q.Rows, K: k, IDs: make([]int32, q.Rows*k), Dist: make([]float32, q.Rows*k)}
	if opt.Watch != nil {
		out.Ranks = make([][]int32, q.Rows)
	}
	if q.Rows == 0 {
		return out, nil
	}
	pl, err := newPlan(q.Rows, db.Rows, k, s.Capacity, s.StateBytes)
	if err != nil {
		return nil, err
	}
	var eng engine
	if s.emulate {
		eng = &emulator{reverse: s.reverse}
	} else {
		eng, err = newDevice()
		if err != nil {
			return nil, err
		}
	}
	defer eng.free()
	return out, run(ctx, eng, pl, q, db, opt, out)
}

// run drives an engine through the plan and decodes its keys into out.
func run(ctx context.Context, eng engine, pl plan, q, db mat32.Matrix, opt knn.Options, out *knn.Neighbors) error {
	ip := opt.Metric == knn.IP
	p := params{k: pl.k, capacity: pl.capacity, qbMax: pl.qb, d: q.Cols, sortLen: pl.sortLen, scratch: pl.scratch,
		excl: opt.Exclude == knn.ExcludeSelf, scale: -2, lo: 0}
	pad := float32(math.Inf(1))
	if ip {
		p.scale, p.lo = -1, float32(math.Inf(-1))
		pad = float32(math.Inf(-1))
	}
	if opt.Watch != nil {
		p.maxRank = opt.Watch.MaxRank
	}
	var nq, nx []float32
	if ip {
		nq, nx = make([]float32, q.Rows), make([]float32, db.Rows)
	} else {
		nx = knn.RowSqNorms(db)
		nq = nx
		if !sameMatrix(q, db) {
			nq = knn.RowSqNorms(q)
		}
	}
	if err := eng.load(p, q.Data, q.Rows, db.Data, db.Rows, nq, nx); err != nil {
		return err
	}
	k := pl.k
	keys := make([]uint64, pl.qb*k)
	for q0 := 0; q0 < q.Rows; q0 += pl.qb {
		qb := min(pl.qb, q.Rows-q0)
		var woff, wids, wcnt, walive []int32
		if opt.Watch != nil {
			woff = make([]int32, qb+1)
			for i := 0; i < qb; i++ {
				ids := opt.Watch.IDs[q0+i]
				woff[i+1] = woff[i] + int32(len(ids))
				wids = append(wids, ids...)
			}
			wcnt, walive = make([]int32, len(wids)), make([]int32, qb)
		}
		if err := eng.begin(q0, qb, woff, wids); err != nil {
			return err
		}
		x0 := 0
		for _, t := range pl.tiles {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := eng.dist(x0, t, false); err != nil {
				return err
			}
			over, err := eng.merge(false)
			for err == nil && over > 0 {
				if err = eng.dist(x0, t, true); err == nil {
					over, err = eng.merge(true)
				}
			}
			if err != nil {
				return err
			}
			if err := eng.shrink(); err != nil {
				return err
			}
			x0 += t
		}
		if err := eng.fetch(keys[:qb*k], wcnt, walive); err != nil {
			return err
		}
		for i := 0; i < qb; i++ {
			gi := q0 + i
			ids, dist := out.IDs[gi*k:(gi+1)*k], out.Dist[gi*k:(gi+1)*k]
			for t, key := range keys[i*k : (i+1)*k] {
				if key == knnkey.Empty {
					ids[t], dist[t] = -1, pad
					continue
				}
				ids[t], dist[t] = knnkey.Output(key, ip)
			}
			if opt.Watch != nil {
				out.Ranks[gi] = watchRanks(wcnt[woff[i]:woff[i+1]], int(walive[i]))
			}
		}
		if opt.Progress != nil {
			opt.Progress(q0+qb, q.Rows)
		}
	}
	return nil
}

// watchRanks turns the bucket counts of one query into the ranks of its
// alive watched rows: rank_m = 1 + m + Σ_{b ≤ m} cnt[b] (the rule of
// knn.Watch's CPU implementation, knn/watch.go).
func watchRanks(cnt []int32, alive int) []int32 {
	out := make([]int32, alive)
	c := int32(0)
	for m := range out {
		c += cnt[m]
		out[m] = int32(m+1) + c
	}
	return out
}

func sameMatrix(a, b mat32.Matrix) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && len(a.Data) > 0 && len(b.Data) > 0 && &a.Data[0] == &b.Data[0]
}

// errNoDevice wraps every "no usable GPU" error.
var errNoDevice = fmt.Errorf("no CUDA device")
