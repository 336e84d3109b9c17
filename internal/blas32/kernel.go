package blas32

//go:generate go run gen_kernels.go

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
)

// microKernel computes the mr×nr tile acc = Σ_p A[p]·B[p] of a packed A
// micro-panel (kc steps of mr values) and a packed B micro-panel (kc steps
// of nr values), p ascending, and stores c[r·ldc+j] = α·acc[r][j], or, when
// add ≠ 0, updates c[r·ldc+j] += α·acc[r][j] with a rounded multiply and
// then a rounded add (no fused α update, so that a tile written through a
// buffer rounds the same way).
type microKernel[T elem] func(a, b, c *T, kc, ldc, add int, alpha T)

// elem is the element type of a GEMM: float32 (Sgemm) or float64 (Dgemm).
type elem interface{ float32 | float64 }

// tile is one micro-kernel with its register-block shape (fn nil: gonum).
type tile[T elem] struct {
	mr, nr int
	fn     microKernel[T]
}

// kernel is one named choice: its float32 and float64 micro-kernels.
type kernel struct {
	name  string
	level kernelsel.Level // the instruction set it needs (Portable: none)
	s     tile[float32]
	d     tile[float64]
}

// kernels lists the micro-kernels this build and CPU can run, fastest
// first: the assembly kernels the CPU supports (asmKernels, per
// architecture), then gonum's Sgemm (fn nil: its SSE/pure-Go loops run 2–3×
// faster than the portable 4×4 Go kernel, so it is the automatic choice
// without AVX2), then the portable kernel, there to be forced and tested.
// A variable initialiser, so that it is complete before init reads it.
var kernels = append(asmKernels(), &kernel{name: "gonum"},
	&kernel{name: "portable", s: tile[float32]{4, 4, kernPortable[float32]}, d: tile[float64]{4, 4, kernPortable[float64]}})

// active is the kernel Sgemm uses.
var active atomic.Pointer[kernel]

// envErr is the problem with DMLBENCH_GEMM, if any.
var envErr error

// EnvVar names the environment variable that forces a kernel.
const EnvVar = "DMLBENCH_GEMM"

func init() {
	active.Store(auto())
	envErr = useEnv(os.Getenv(EnvVar))
}

// auto is the automatic choice: the fastest kernel at or below the level
// the k-NN and k-means kernels use (kernelsel.Chosen, so DMLBENCH_KERNEL
// forces the training GEMM too), gonum's when that level has no assembly.
func auto() *kernel {
	lvl := kernelsel.Chosen()
	for _, k := range kernels {
		if k.s.fn != nil && k.level <= lvl && k.level > kernelsel.Portable {
			return k
		}
	}
	for _, k := range kernels {
		if k.name == "gonum" {
			return k
		}
	}
	return kernels[0]
}

// useEnv applies a DMLBENCH_GEMM value: empty or "auto" keeps the
// automatic choice, a kernel name forces it.
func useEnv(v string) error {
	v = strings.TrimSpace(v)
	if v == "" || v == "auto" {
		active.Store(auto())
		return nil
	}
	if err := SetKernel(v); err != nil {
		active.Store(auto())
		return fmt.Errorf("%s=%s: %w", EnvVar, v, err)
	}
	return nil
}

// EnvError reports an unknown or unsupported DMLBENCH_GEMM value (nil when
// it is unset, "auto" or a kernel this CPU runs). While it is non-nil Sgemm
// uses the automatic choice; callers should refuse to run.
func EnvError() error { return envErr }

// Kernels names the kernels this build and CPU can run, fastest first.
func Kernels() []string {
	names := make([]string, len(kernels))
	for i, k := range kernels {
		names[i] = k.name
	}
	return names
}

// Kernel names the kernel Sgemm uses ("avx512", "avx2", "gonum" or
// "portable").
func Kernel() string { return active.Load().name }

// SetKernel makes Sgemm use the named kernel ("auto" = the fastest); it
// fails for a kernel the CPU or build cannot run.
func SetKernel(name string) error {
	if name == "auto" {
		active.Store(auto())
		return nil
	}
	for _, k := range kernels {
		if k.name == name {
			active.Store(k)
			return nil
		}
	}
	known := "avx512, avx2, gonum, portable"
	return fmt.Errorf("GEMM kernel %q is not available on this CPU/build (have %s; known: %s, auto)", name, strings.Join(Kernels(), ", "), known)
}

// kernPortable is the Go 4×4 micro-kernel: 16 scalar accumulators.
func kernPortable[T elem](a, b, c *T, kc, ldc, add int, alpha T) {
	pa := unsafeSlice(a, 4*kc)
	pb := unsafeSlice(b, 4*kc)
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	for p := 0; p < kc; p++ {
		av := pa[4*p : 4*p+4 : 4*p+4]
		bv := pb[4*p : 4*p+4 : 4*p+4]
		a0, a1, a2, a3 := av[0], av[1], av[2], av[3]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	cs := unsafeSlice(c, 3*ldc+4)
	upd := func(r []T, x0, x1, x2, x3 T) {
		r = r[:4:4]
		if add == 0 {
			r[0], r[1], r[2], r[3] = alpha*x0, alpha*x1, alpha*x2, alpha*x3
			return
		}
		r[0] += T(alpha * x0)
		r[1] += T(alpha * x1)
		r[2] += T(alpha * x2)
		r[3] += T(alpha * x3)
	}
	upd(cs[0:], c00, c01, c02, c03)
	upd(cs[ldc:], c10, c11, c12, c13)
	upd(cs[2*ldc:], c20, c21, c22, c23)
	upd(cs[3*ldc:], c30, c31, c32, c33)
}
