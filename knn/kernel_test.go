package knn

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
)

func TestKernEpiLayout(t *testing.T) {
	var e kernEpi
	got := map[string]uintptr{
		"c": unsafe.Offsetof(e.c), "nq": unsafe.Offsetof(e.nq), "thr": unsafe.Offsetof(e.thr),
		"scale": unsafe.Offsetof(e.scale), "lo": unsafe.Offsetof(e.lo), "nx": unsafe.Offsetof(e.nx),
		"cthr": unsafe.Offsetof(e.cthr), "rmask": unsafe.Offsetof(e.rmask), "cmask": unsafe.Offsetof(e.cmask),
	}
	want := map[string]uintptr{"c": 0, "nq": 768, "thr": 800, "scale": 832, "lo": 864, "nx": 896, "cthr": 904, "rmask": 912, "cmask": 944}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("kernEpi.%s at offset %d, assembly expects %d", k, got[k], v)
		}
	}
}

// TestKernels checks the micro-kernel of every level (AVX-512, AVX2,
// portable; skipped where this CPU lacks it) against a float64 reference of
// the contract, including the masks, for both metrics.
func TestKernels(t *testing.T) {
	for _, l := range []kernelsel.Level{kernelsel.AVX512, kernelsel.AVX2, kernelsel.Portable} {
		t.Run(l.String(), func(t *testing.T) {
			for _, k := range kernels {
				if k.level == l {
					testKernel(t, k)
					return
				}
			}
			t.Skipf("this CPU or build lacks the %s kernel", l)
		})
	}
	t.Logf("kernels: %d, active %s", len(kernels), KernelName())
}

func testKernel(t *testing.T, k kernelImpl) {
	rng := rand.New(rand.NewSource(1))
	{
		nr := k.nr
		for _, kc := range []int{0, 1, 3, 17, 128} {
			for _, metric := range []Metric{L2, IP} {
				a := alignedFloats(kc * mr)
				b := alignedFloats(kc * nr)
				for i := range a {
					a[i] = float32(rng.NormFloat64())
				}
				for i := range b {
					b[i] = float32(rng.NormFloat64())
				}
				nx := make([]float32, nr)
				cthr := make([]float32, nr)
				ep := &kernEpi{nx: &nx[0], cthr: &cthr[0]}
				ep.scale, ep.lo = fill8(-2), fill8(0)
				if metric == IP {
					ep.scale, ep.lo = fill8(-1), fill8(negInf)
				}
				ref := make([]float64, mr*nr)
				for r := 0; r < mr; r++ {
					for j := 0; j < nr; j++ {
						var s float64
						for p := 0; p < kc; p++ {
							s += float64(a[p*mr+r]) * float64(b[p*nr+j])
						}
						ref[r*nr+j] = s
					}
				}
				if metric == L2 {
					for r := 0; r < mr; r++ {
						var s float64
						for p := 0; p < kc; p++ {
							s += float64(a[p*mr+r]) * float64(a[p*mr+r])
						}
						ep.nq[r] = float32(s)
					}
					for j := 0; j < nr; j++ {
						var s float64
						for p := 0; p < kc; p++ {
							s += float64(b[p*nr+j]) * float64(b[p*nr+j])
						}
						nx[j] = float32(s)
					}
				}
				want := make([]float64, mr*nr)
				for r := 0; r < mr; r++ {
					for j := 0; j < nr; j++ {
						if metric == L2 {
							want[r*nr+j] = math.Max(0, float64(ep.nq[r])+float64(nx[j])-2*ref[r*nr+j])
						} else {
							want[r*nr+j] = -ref[r*nr+j]
						}
					}
				}
				// Thresholds at the median of each row / column.
				for r := 0; r < mr; r++ {
					ep.thr[r] = float32(want[r*nr+r])
				}
				for j := 0; j < nr; j++ {
					cthr[j] = float32(want[(j%mr)*nr+j])
				}
				k.fn(ptrOrNil(a), ptrOrNil(b), kc, ep)
				var cm uint32
				for r := 0; r < mr; r++ {
					var rm uint32
					for j := 0; j < nr; j++ {
						got := ep.c[r*nr+j]
						tol := 1e-4 * (1 + math.Abs(want[r*nr+j]) + float64(ep.nq[r]+nx[j]))
						if math.Abs(float64(got)-want[r*nr+j]) > tol {
							t.Fatalf("%s kc=%d %v: D[%d][%d] = %g, want %g", k.name, kc, metric, r, j, got, want[r*nr+j])
						}
						if got <= ep.thr[r] {
							rm |= 1 << j
						}
						if got <= cthr[j] {
							cm |= 1 << j
						}
					}
					if ep.rmask[r] != rm {
						t.Fatalf("%s kc=%d %v: rmask[%d] = %016b, want %016b", k.name, kc, metric, r, ep.rmask[r], rm)
					}
				}
				if ep.cmask != cm {
					t.Fatalf("%s kc=%d %v: cmask = %016b, want %016b", k.name, kc, metric, ep.cmask, cm)
				}
			}
		}
	}
}

func ptrOrNil(s []float32) *float32 {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
