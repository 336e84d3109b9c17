package gpu

import (
	"context"
	"fmt"
	"math"

	"github.com/dmlbench/dmlbench/internal/fma32"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// NearestCentroids is clustering.NearestCentroids on the GPU: for every row
// of x the nearest centroid in squared Euclidean distance (ties → lowest
// index) and that distance ‖x‖² + (‖c‖² − 2⟨x, c⟩) clamped at 0, with the
// CPU's arithmetic: ⟨x, c⟩ is one fused-multiply-add chain over d, the
// arg-min value is fma(⟨x, c⟩, −2, ‖c‖²), and the norms are float32 sums in
// order computed on the host by fma32.SqNorm like clustering's. The result
// is bit-identical to clustering.NearestCentroids at every kernel level
// (fma32 is that arithmetic), so a k-means
// whose assignment step calls this (initialisation and updates unchanged)
// gives the CPU's clusters: Assigner wires it into clustering.KMeans.
// Device memory: 4·D·(N + K) + 12·N + 4·K bytes.
func NearestCentroids(ctx context.Context, x, centroids mat32.Matrix) ([]int32, []float32, error) {
	return nearestCentroids(ctx, x, centroids, false)
}

// Assigner is the k-means assignment step on the GPU
// (clustering.CentroidAssigner): every Lloyd iteration of clustering.KMeans
// calls NearestCentroids. Searcher is an assigner too, so the backends
// "gpu" and "auto" run their k-means there (clustering.KMeansOn); neither
// package imports the other.
type Assigner struct {
	emulate bool // run the CPU emulation of the kernel instead (tests)
}

// Name implements clustering.CentroidAssigner.
func (a Assigner) Name() string {
	if a.emulate {
		return "the GPU kernel's CPU emulation"
	}
	return "the GPU"
}

// NearestCentroids implements clustering.CentroidAssigner.
func (a Assigner) NearestCentroids(ctx context.Context, x, centroids mat32.Matrix) ([]int32, []float32, error) {
	return nearestCentroids(ctx, x, centroids, a.emulate)
}

func nearestCentroids(ctx context.Context, x, c mat32.Matrix, emulate bool) ([]int32, []float32, error) {
	if x.Cols != c.Cols || len(x.Data) != x.Rows*x.Cols || len(c.Data) != c.Rows*c.Cols {
		return nil, nil, fmt.Errorf("gpu: data %d×%d and centroids %d×%d do not match", x.Rows, x.Cols, c.Rows, c.Cols)
	}
	if c.Rows == 0 {
		return nil, nil, fmt.Errorf("gpu: no centroids")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	assign, dist := make([]int32, x.Rows), make([]float32, x.Rows)
	if x.Rows == 0 {
		return assign, dist, nil
	}
	cn := make([]float32, c.Rows)
	for j := range cn {
		cn[j] = fma32.SqNorm(c.Row(j))
	}
	var bestv []float32
	var err error
	if emulate {
		bestv, assign = emulateArgmin(x, c, cn)
	} else if bestv, assign, err = deviceArgmin(x, c, cn); err != nil {
		return nil, nil, err
	}
	for i := range dist {
		dist[i] = max(fma32.SqNorm(x.Row(i))+bestv[i], 0)
	}
	return assign, dist, nil
}

// emulateArgmin is kernel assign_argmin on the CPU.
func emulateArgmin(x, c mat32.Matrix, cn []float32) ([]float32, []int32) {
	bv, bi := make([]float32, x.Rows), make([]int32, x.Rows)
	for i := 0; i < x.Rows; i++ {
		v, id := float32(math.Inf(1)), int32(0)
		xr := x.Row(i)
		for j := 0; j < c.Rows; j++ {
			cr := c.Row(j)
			var acc float32
			for p := range xr {
				acc = fma32.FMA(xr[p], cr[p], acc)
			}
			w := fma32.FMA(acc, -2, cn[j])
			if w < v || (w == v && int32(j) < id) {
				v, id = w, int32(j)
			}
		}
		bv[i], bi[i] = v, id
	}
	return bv, bi
}
