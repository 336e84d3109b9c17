package blas32

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

func widen(s []float32) []float64 {
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = float64(v)
	}
	return d
}

// TestDgemmMatchesGonum is TestSgemmMatchesGonum for Dgemm (relative
// 1e-12), on the same shapes (the losses' Gram products are among them:
// B×D times D×B for B = 112, D = 128), transposes, α, β and thread counts.
func TestDgemmMatchesGonum(t *testing.T) {
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	shapes := append([][3]int{{112, 112, 128}, {112, 128, 112}, {128, 112, 112}}, gemmShapes...)
	forKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(3))
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tA := range trans {
				for _, tB := range trans {
					for _, ab := range [][2]float64{{1, 0}, {-1.5, 0.25}} {
						for _, th := range []int{1, 2} {
							a32, lda, b32, ldb, c32, ldc := gemmCase(rng, tA, tB, m, n, k)
							a, b, c := widen(a32), widen(b32), widen(c32)
							want := append([]float64(nil), c...)
							gonum.Implementation{}.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
							Implementation{Threads: th}.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
							name := fmt.Sprintf("%c%c m=%d n=%d k=%d α=%g β=%g threads=%d", tA, tB, m, n, k, ab[0], ab[1], th)
							var d, s float64
							for i := 0; i < m; i++ {
								for j := 0; j < ldc; j++ {
									x, y := c[i*ldc+j], want[i*ldc+j]
									if j >= n && x != y {
										t.Fatalf("%s: C[%d][%d] past column n changed", name, i, j)
									}
									d, s = math.Max(d, math.Abs(x-y)), math.Max(s, math.Abs(y))
								}
							}
							if d > 1e-12*(s+1e-300) {
								t.Fatalf("%s: relative error %.3g > 1e-12", name, d/s)
							}
						}
					}
				}
			}
		}
	})
}

// TestDgemmThreadsBitIdentical: Dgemm's result does not depend on the
// number of goroutines.
func TestDgemmThreadsBitIdentical(t *testing.T) {
	forKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(4))
		for _, sh := range [][3]int{{112, 112, 128}, {1000, 37, 300}, {37, 1000, 600}} {
			m, n, k := sh[0], sh[1], sh[2]
			a32, lda, b32, ldb, c32, ldc := gemmCase(rng, blas.Trans, blas.NoTrans, m, n, k)
			a, b, c0 := widen(a32), widen(b32), widen(c32)
			var ref []float64
			for _, th := range []int{1, 2, 3} {
				c := append([]float64(nil), c0...)
				Implementation{Threads: th}.Dgemm(blas.Trans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
				if ref == nil {
					ref = c
					continue
				}
				for i := range c {
					if math.Float64bits(c[i]) != math.Float64bits(ref[i]) {
						t.Fatalf("m=%d n=%d k=%d: %d threads differ from 1 thread at %d", m, n, k, th, i)
					}
				}
			}
		}
	})
}
