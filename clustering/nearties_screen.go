package clustering

import (
	"context"
	"github.com/dmlbench/dmlbench/internal/exactdist"
	"math"

	"github.com/dmlbench/dmlbench/internal/parallel"
)

// screen bounds, for every candidate (row, group) that is not direct, the
// distance from the row to the group's members other than its centroid
// with the assignment's own SIMD kernel (boundsRows: kernel values
// v = ‖c‖² − 2⟨x, c⟩ in float32, off by at most yinyang.go's
// e = κ·(‖x‖² + 2·max‖c‖²) + 10⁻³⁰), candidates of one group four at a
// time, the lanes of the tile's rows' centroids masked (norm +Inf) and
// those that are another row's candidates computed in float64. It
// returns which candidates the screen does not exclude (bound squared at
// most T), direct ones included; an own-group bound becomes sec. Few
// candidates skip the screen: packing the K centroids would cost more
// than their float64 distances (K/G per candidate).
func (p *tiePass) screen(ctx context.Context, threads int, ya *yinyangAssigner, cands []tieCand) ([]bool, error) {
	need := make([]bool, len(cands))
	var idx []int32
	for c, cd := range cands {
		if cd.direct {
			need[c] = true
		} else {
			idx = append(idx, int32(c))
		}
	}
	if len(idx) < 2*p.ng {
		for _, c := range idx {
			need[c] = true
		}
		return need, nil
	}
	// Panels per group: Yinyang's packing in group order, or all
	// centroids in index order as one group.
	var pk *centroidPack
	var ids, gp []int32
	if p.grp != nil {
		pk, ids, gp = ya.packGroups(p.cent.Data), ya.ids, ya.gp
	} else {
		k := p.cent.Rows
		pk = packCentroids(p.cent.Data, k, p.d)
		np := (k + tileCols - 1) / tileCols
		ids = make([]int32, np*tileCols)
		for j := range ids {
			ids[j] = int32(j)
			if j >= k {
				ids[j] = math.MaxInt32
			}
		}
		gp = []int32{0, int32(np)}
	}
	// Candidates by group, then by the rows' centroids (two stable
	// counting sorts), so that a tile's rows mostly share their centroid
	// and few lanes need float64 distances.
	byCent := countingSort(idx, p.cent.Rows, func(c int32) int32 { return p.assign[cands[c].row] })
	sorted := countingSort(byCent, p.ng, func(c int32) int32 { return cands[c].group })
	var tiles [][2]int // [start, end) in sorted, one group each
	for s := 0; s < len(sorted); {
		g := cands[sorted[s]].group
		e := s + 1
		for e < len(sorted) && e-s < tileRows && cands[sorted[e]].group == g {
			e++
		}
		tiles = append(tiles, [2]int{s, e})
		s = e
	}
	kappa := 2 * float64(p.d+2) / (1 << 24) * (1 + 1.0/(1<<10))
	c2 := p.c2Max * (1 + 1.0/(1<<20))
	err := parallel.Blocks(ctx, threads, len(tiles), newTileScratch, func(sc *tileScratch, b int) error {
		p.screenTile(cands, sorted[tiles[b][0]:tiles[b][1]], need, pk, ids, gp, kappa, c2, sc)
		return nil
	})
	return need, err
}

// tileScratch is one screening worker's scratch.
type tileScratch struct {
	best [tileRows * tileCols]float32
	bidx [tileRows * tileCols]int32
	norm [tileCols]float32
	out  [tileRows]float32
	oid  [tileRows]int32
}

func newTileScratch() *tileScratch { return &tileScratch{} }

// screenTile screens the candidates tile (at most four, one group).
func (p *tiePass) screenTile(cands []tieCand, tile []int32, need []bool, pk *centroidPack, ids, gp []int32, kappa, c2 float64, sc *tileScratch) {
	d := p.d
	g := cands[tile[0]].group
	var xr [tileRows][]float32
	for r := range xr {
		xr[r] = p.x.Row(int(cands[tile[min(r, len(tile)-1)]].row))
	}
	inf := float32(math.Inf(1))
	for l := range sc.best {
		sc.best[l], sc.bidx[l] = inf, math.MaxInt32
	}
	for q := gp[g]; q < gp[g+1]; q++ {
		pid := ids[int(q)*tileCols : int(q+1)*tileCols]
		copy(sc.norm[:], pk.norms[int(q)*tileCols:int(q+1)*tileCols])
		for l, j := range pid {
			for _, c := range tile {
				if j == p.assign[cands[c].row] {
					sc.norm[l] = inf
				}
			}
		}
		boundsRows(xr[0], xr[1], xr[2], xr[3], pk.panels[int(q)*d*tileCols:], sc.norm[:], pid, sc.best[:], sc.bidx[:], d)
	}
	groupArgmin(sc.best[:], sc.bidx[:], &sc.out, &sc.oid)
	for r, c := range tile {
		i := int(cands[c].row)
		a := p.assign[i]
		x2 := p.xnorm[i]
		low := x2 + float64(sc.out[r]) - (kappa*(x2+2*c2) + 1e-30)
		for _, o := range tile {
			// Another row's centroid of this group, masked above.
			if ao := p.assign[cands[o].row]; ao != a && p.group(ao) == int(g) {
				dj, ej := exactdist.L2(p.x.Row(i), p.cent.Row(int(ao)))
				low = min(low, dj-ej)
			}
		}
		// 1 − 2⁻²⁰ absorbs the float64 roundings (as yinyang.go's store).
		bound := math.Sqrt(max(0, low)) * (1 - 1.0/(1<<20))
		if int(g) == p.group(a) {
			p.sec[i], p.secFor[i] = bound, a
		}
		need[c] = bound*bound <= p.tt[i]
	}
}

// countingSort returns v stably sorted by key (in [0, n)).
func countingSort(v []int32, n int, key func(int32) int32) []int32 {
	start := make([]int32, n+1)
	for _, c := range v {
		start[key(c)+1]++
	}
	for g := 1; g <= n; g++ {
		start[g] += start[g-1]
	}
	out := make([]int32, len(v))
	for _, c := range v {
		g := key(c)
		out[start[g]] = c
		start[g]++
	}
	return out
}
