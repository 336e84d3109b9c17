package clustering

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dmlbench/dmlbench/knn"
)

// Tile geometry of the nearest-centroid kernel. A micro-tile is 4 data rows ×
// 16 centroids: the centroids of a panel sit in the lanes of two 8-wide
// vectors and every row value is stored pre-broadcast (8 copies) so that the
// kernel only issues vector loads and fused multiply-adds (Go's archsimd has
// no broadcast-from-memory, and a scalar load + broadcast costs two µops).
// Eight accumulators leave room in the 16 AVX2 registers, so nothing spills.
const (
	tileRows  = 4
	tileCols  = 16
	lanes     = 8
	blockRows = 8 * tileRows // rows packed per work item (expanded: 32·D·32 B)
	chunkCols = 256          // centroids per L2-resident chunk
	packPad   = 64           // spare floats after packed buffers (see argminTile4x16)
)

// argminTile is the micro-kernel. r holds one packed tile of 4 rows stored
// dimension-major and pre-broadcast ([D][4][8]), c one panel of 16 centroids
// ([D][16]) and cn their squared norms. For every row i and centroid j it
// computes v = cn[j] − 2·⟨x_i, c_j⟩ (the row norm is constant per row and
// added later) and keeps, per row and per lane l = j mod 16, the smallest v
// and its centroid index (strict <, so among equal values the lowest index
// wins, centroids being visited in increasing order): best and bidx are
// [4][16]. The dot products are accumulated over d = 0..D−1 in order, the
// same for every (row, centroid) pair whatever the tiling or thread count,
// which makes the assignment deterministic.
//
// The SIMD build (goexperiment.simd, amd64, AVX2+FMA at run time) replaces it
// with a register-blocked FMA kernel; see assign_simd_amd64.go.
var argminTile = argminTileGeneric

// kernelName reports the active micro-kernel.
var kernelName = "generic"

// KernelName names the nearest-centroid kernel in use ("avx2-fma-4x16" or
// "generic").
func KernelName() string { return kernelName }

func argminTileGeneric(r, c, cn []float32, j0 int32, best []float32, bidx []int32, d int) {
	var v [tileRows * tileCols]float32
	tileValuesGeneric(r, c, cn, &v, d)
	for i := range v {
		if v[i] < best[i] {
			best[i] = v[i]
			bidx[i] = j0 + int32(i%tileCols)
		}
	}
}

// tileValuesGeneric stores v[i·16+j] = cn[j] − 2·⟨x_i, c_j⟩ for one 4-row
// tile and one 16-centroid panel. Both generic kernels (argminTileGeneric,
// boundsTileGeneric) call it, so they round identically.
func tileValuesGeneric(r, c, cn []float32, v *[tileRows * tileCols]float32, d int) {
	var acc [tileRows * tileCols]float32
	for t := 0; t < d; t++ {
		rt := r[t*tileRows*lanes : (t+1)*tileRows*lanes]
		ct := c[t*tileCols : (t+1)*tileCols]
		for i := 0; i < tileRows; i++ {
			rv := rt[i*lanes]
			row := acc[i*tileCols : (i+1)*tileCols]
			for j, cv := range ct {
				row[j] += rv * cv
			}
		}
	}
	for i := 0; i < tileRows; i++ {
		for j := 0; j < tileCols; j++ {
			v[i*tileCols+j] = cn[j] - 2*acc[i*tileCols+j]
		}
	}
}

// boundsTile is the micro-kernel of the pruned (Yinyang) assignment. It
// computes exactly the values argminTile computes (same accumulation order,
// same rounding) for one 4-row tile and one 16-centroid panel whose
// centroid ids are ids (panels of a permuted centroid order, so ids are not
// increasing), and keeps per row i and lane l the lexicographically
// smallest (v, id) in best/bidx ([4][16]), so that the lowest id wins ties
// whatever the visiting order.
var boundsTile = boundsTileGeneric

// boundsRows is boundsTile with the four rows given as plain slices
// (x0..x3, each of length ≥ D) instead of a packed pre-broadcast tile; it
// computes the same values.
var boundsRows = boundsRowsGeneric

func boundsRowsGeneric(x0, x1, x2, x3, c, cn []float32, ids []int32, best []float32, bidx []int32, d int) {
	r := make([]float32, tileRows*lanes*d+packPad)
	for i, x := range [tileRows][]float32{x0, x1, x2, x3} {
		expandRowGeneric(r[i*lanes:], x[:d])
	}
	boundsTileGeneric(r, c, cn, ids, best, bidx, d)
}

func boundsTileGeneric(r, c, cn []float32, ids []int32, best []float32, bidx []int32, d int) {
	var v [tileRows * tileCols]float32
	tileValuesGeneric(r, c, cn, &v, d)
	for i, x := range v {
		id := ids[i%tileCols]
		if x < best[i] || (x == best[i] && id < bidx[i]) {
			best[i] = x
			bidx[i] = id
		}
	}
}

// expandRow writes row value t at dst[t·32 : t·32+8] (8 copies) for every
// dimension t and returns the squared norm of row (float32, in order). The
// SIMD build replaces it with a broadcast-store version.
var expandRow = expandRowGeneric

func expandRowGeneric(dst, row []float32) float32 {
	for t, v := range row {
		q := dst[t*tileRows*lanes : t*tileRows*lanes+lanes]
		for l := range q {
			q[l] = v
		}
	}
	return rowNorm32(row)
}

// rowNorm32 is the float32 squared norm every assignment path uses (one
// function so that all paths round identically).
func rowNorm32(row []float32) float32 {
	var s float32
	for _, v := range row {
		s += v * v
	}
	return s
}

// centroidPack is a K×D centroid matrix packed in panels of tileCols
// centroids stored dimension-major, padded with zero centroids whose norm is
// +Inf so that they are never selected.
type centroidPack struct {
	k, d   int
	panels []float32 // ceil(k/16) × d × 16, then packPad zeros
	norms  []float32 // ceil(k/16)·16
}

func packCentroids(c []float32, k, d int) *centroidPack {
	np := (k + tileCols - 1) / tileCols
	p := &centroidPack{k: k, d: d, panels: make([]float32, np*d*tileCols+packPad), norms: make([]float32, np*tileCols)}
	for j := range p.norms {
		p.norms[j] = float32(math.Inf(1))
	}
	for j := 0; j < k; j++ {
		row := c[j*d : (j+1)*d]
		panel := p.panels[(j/tileCols)*d*tileCols:]
		jj := j % tileCols
		var s float32
		for t, v := range row {
			panel[t*tileCols+jj] = v
			s += v * v
		}
		p.norms[j] = s
	}
	return p
}

// NearestCentroids returns, for every row of x, the index of the nearest
// centroid in squared Euclidean distance (ties → lowest index) and that
// distance computed as ‖x‖² + ‖c‖² − 2⟨x, c⟩ in float32 (faiss's
// IndexFlatL2 expansion; may be slightly negative by rounding, it is clamped
// at 0). It is an exact blocked k=1 search: every distance is evaluated, the
// N×K×D product runs through a register-blocked micro-kernel (SIMD when
// available), memory is O(threads·32·8·D + K·D). Results do not depend on
// threads (<= 0 means GOMAXPROCS).
func NearestCentroids(ctx context.Context, x, centroids knn.Matrix, threads int) ([]int32, []float32, error) {
	if err := checkMatrix("data", x); err != nil {
		return nil, nil, err
	}
	if err := checkMatrix("centroids", centroids); err != nil {
		return nil, nil, err
	}
	if x.Cols != centroids.Cols {
		return nil, nil, fmt.Errorf("clustering: data dimension %d differs from centroid dimension %d", x.Cols, centroids.Cols)
	}
	if centroids.Rows == 0 {
		return nil, nil, fmt.Errorf("clustering: no centroids")
	}
	assign := make([]int32, x.Rows)
	dist := make([]float32, x.Rows)
	p := packCentroids(centroids.Data, centroids.Rows, centroids.Cols)
	if err := p.assign(ctx, x, threads, assign, dist, nil); err != nil {
		return nil, nil, err
	}
	return assign, dist, nil
}

func checkMatrix(what string, m knn.Matrix) error {
	if m.Rows < 0 || m.Cols < 0 || len(m.Data) != m.Rows*m.Cols {
		return fmt.Errorf("clustering: %s matrix %d×%d has %d values, want %d", what, m.Rows, m.Cols, len(m.Data), m.Rows*m.Cols)
	}
	return nil
}

// assign fills assign/dist for every row of x (see NearestCentroids).
//
// raw, when not nil, receives the kernel's arg-min value cn[j] − 2⟨x, c_j⟩
// (float32, before the row norm is added and before clamping): it is a pure
// function of the bits of x_i and c_j, which lets KMeans recombine searches
// over subsets of centroids exactly (see lloydAssigner).
func (p *centroidPack) assign(ctx context.Context, x knn.Matrix, threads int, assign []int32, dist, raw []float32) error {
	n, d := x.Rows, x.Cols
	if n == 0 {
		return nil
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	nblocks := (n + blockRows - 1) / blockRows
	if threads > nblocks {
		threads = nblocks
	}
	npanels := len(p.norms) / tileCols
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, threads)
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tileLen := tileRows * lanes * d
			pack := make([]float32, (blockRows/tileRows)*tileLen+packPad)
			best := make([]float32, blockRows*tileCols)
			bidx := make([]int32, blockRows*tileCols)
			norms := make([]float32, blockRows)
			for {
				b := int(next.Add(1) - 1)
				if b >= nblocks {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				r0 := b * blockRows
				r1 := min(r0+blockRows, n)
				ntiles := (r1 - r0 + tileRows - 1) / tileRows
				// Pack rows tile by tile, dimension-major, each value
				// repeated in 8 lanes; pad rows are zero.
				if (r1-r0)%tileRows != 0 {
					clear(pack[(ntiles-1)*tileLen : ntiles*tileLen])
				}
				for i := r0; i < r1; i++ {
					li := i - r0
					tile := pack[(li/tileRows)*tileLen : (li/tileRows+1)*tileLen]
					norms[li] = expandRow(tile[(li%tileRows)*lanes:], x.Row(i))
				}
				for i := range best[:ntiles*tileRows*tileCols] {
					best[i] = float32(math.Inf(1))
					bidx[i] = 0
				}
				for c0 := 0; c0 < npanels; c0 += chunkCols / tileCols {
					c1 := min(c0+chunkCols/tileCols, npanels)
					for ti := 0; ti < ntiles; ti++ {
						rt := pack[ti*tileLen:] // includes the padding (see packPad)
						bt := best[ti*tileRows*tileCols : (ti+1)*tileRows*tileCols]
						it := bidx[ti*tileRows*tileCols : (ti+1)*tileRows*tileCols]
						for pi := c0; pi < c1; pi++ {
							argminTile(rt, p.panels[pi*d*tileCols:], p.norms[pi*tileCols:(pi+1)*tileCols],
								int32(pi*tileCols), bt, it, d)
						}
					}
				}
				for i := r0; i < r1; i++ {
					li := i - r0
					bv, bi := best[li*tileCols], bidx[li*tileCols]
					for l := 1; l < tileCols; l++ {
						v, id := best[li*tileCols+l], bidx[li*tileCols+l]
						if v < bv || (v == bv && id < bi) {
							bv, bi = v, id
						}
					}
					assign[i] = bi
					dist[i] = max(norms[li]+bv, 0)
					if raw != nil {
						raw[i] = bv
					}
				}
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
