package blas32

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
)

// gemmShapes are the m, n, k of every Sgemm the trainer's MLP and CNN make
// (logged from a training step), plus odd sizes, k = 1, tails around the
// register and cache blocks, and degenerate ones.
var gemmShapes = [][3]int{
	// MLP 512→512→128, batch 112 (BenchmarkTrainStep).
	{112, 128, 512}, {112, 512, 512}, {112, 512, 128}, {512, 128, 112}, {512, 512, 112},
	// CNN 32,64 on 28×28, chunk 112 (rows scaled down where the k-loop is the same).
	{112, 128, 3136}, {2744, 64, 288}, {2744, 288, 64}, {288, 64, 2744}, {1372, 32, 9}, {1372, 9, 32}, {9, 32, 5000},
	// The convolutions with pixels as columns (A packed once for every panel of B).
	{64, 1100, 288}, {32, 1030, 576}, {144, 520, 7},
	// Odd sizes and tails.
	{1, 1, 1}, {1, 1, 7}, {7, 1, 1}, {1, 33, 1}, {5, 3, 1}, {13, 17, 1}, {6, 16, 256}, {12, 32, 256},
	{7, 17, 257}, {11, 31, 255}, {13, 33, 513}, {145, 513, 3}, {97, 65, 300}, {300, 97, 65},
	{0, 5, 3}, {5, 0, 3}, {5, 3, 0},
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// gemmCase builds op(A) m×k and op(B) k×n stored with padded leading
// dimensions (so that ld > width is exercised) and a random C.
func gemmCase(rng *rand.Rand, tA, tB blas.Transpose, m, n, k int) (a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	rowsA, colsA := m, k
	if tA == blas.Trans {
		rowsA, colsA = k, m
	}
	rowsB, colsB := k, n
	if tB == blas.Trans {
		rowsB, colsB = n, k
	}
	lda, ldb, ldc = max(1, colsA+3), max(1, colsB+1), max(1, n+2)
	a = randSlice(rng, max(0, rowsA*lda))
	b = randSlice(rng, max(0, rowsB*ldb))
	c = randSlice(rng, max(0, m*ldc))
	return
}

// relErr is max |x−y| / (max |y| + tiny) over the m×n block.
func relErr(x, y []float32, m, n, ld int) float64 {
	var d, s float64
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			d = math.Max(d, math.Abs(float64(x[i*ld+j])-float64(y[i*ld+j])))
			s = math.Max(s, math.Abs(float64(y[i*ld+j])))
		}
	}
	return d / (s + 1e-30)
}

func forKernels(t *testing.T, f func(t *testing.T)) {
	prev := Kernel()
	defer SetKernel(prev)
	for _, name := range Kernels() {
		if name == "gonum" {
			continue // the reference itself
		}
		if err := SetKernel(name); err != nil {
			t.Fatal(err)
		}
		t.Run(name, f)
	}
}

// TestSgemmMatchesGonum compares every kernel with gonum's Sgemm on every
// shape and transpose combination, for several α, β (relative 1e-5), with
// one and two goroutines; elements outside the m×n block must be untouched.
func TestSgemmMatchesGonum(t *testing.T) {
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	forKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		for _, sh := range gemmShapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tA := range trans {
				for _, tB := range trans {
					for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-1.5, 0.25}} {
						for _, th := range []int{1, 2} {
							a, lda, b, ldb, c, ldc := gemmCase(rng, tA, tB, m, n, k)
							want := append([]float32(nil), c...)
							gonum.Implementation{}.Sgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
							Implementation{Threads: th}.Sgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
							name := fmt.Sprintf("%c%c m=%d n=%d k=%d α=%g β=%g threads=%d", tA, tB, m, n, k, ab[0], ab[1], th)
							if e := relErr(c, want, m, n, ldc); e > 1e-5 {
								t.Fatalf("%s: relative error %.3g > 1e-5", name, e)
							}
							for i := 0; i < m; i++ {
								for j := n; j < ldc; j++ {
									if c[i*ldc+j] != want[i*ldc+j] {
										t.Fatalf("%s: C[%d][%d] past column n changed", name, i, j)
									}
								}
							}
						}
					}
				}
			}
		}
	})
}

// TestSgemmBetaZeroClearsNaN: β = 0 overwrites C, NaNs included (the
// reference BLAS semantics that Gorgonia relies on for fresh outputs).
func TestSgemmBetaZeroClearsNaN(t *testing.T) {
	forKernels(t, func(t *testing.T) {
		a := []float32{1, 2, 3, 4}
		c := []float32{float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), float32(math.NaN())}
		Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2)
		want := []float32{7, 10, 15, 22}
		for i := range c {
			if c[i] != want[i] {
				t.Fatalf("C = %v, want %v", c, want)
			}
		}
	})
}

// TestSgemmThreadsBitIdentical: the result of a kernel does not depend on
// the number of goroutines (package comment), on shapes that split by
// rows and by columns with tails.
func TestSgemmThreadsBitIdentical(t *testing.T) {
	forKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewSource(2))
		for _, sh := range [][3]int{{112, 512, 512}, {1000, 37, 300}, {37, 1000, 600}, {512, 512, 112}} {
			m, n, k := sh[0], sh[1], sh[2]
			a, lda, b, ldb, c0, ldc := gemmCase(rng, blas.NoTrans, blas.Trans, m, n, k)
			var ref []float32
			for _, th := range []int{1, 2, 3, 8} {
				c := append([]float32(nil), c0...)
				Implementation{Threads: th}.Sgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
				if ref == nil {
					ref = c
					continue
				}
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("m=%d n=%d k=%d: %d threads differ from 1 thread at %d", m, n, k, th, i)
					}
				}
			}
		}
	})
}

// TestSgemmBadArgsPanicLikeGonum: invalid arguments reach gonum's checks.
func TestSgemmBadArgsPanicLikeGonum(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("short C accepted")
		}
	}()
	Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 2, 1, make([]float32, 4), 2, make([]float32, 4), 2, 0, make([]float32, 3), 2)
}

func TestSetKernel(t *testing.T) {
	prev := Kernel()
	defer SetKernel(prev)
	if err := SetKernel("portable"); err != nil || Kernel() != "portable" {
		t.Fatalf("portable: %v (%s)", err, Kernel())
	}
	if err := SetKernel("avx9000"); err == nil {
		t.Fatal("unknown kernel accepted")
	}
	if err := SetKernel("auto"); err != nil || Kernel() != auto().name {
		t.Fatalf("auto: %v (%s)", err, Kernel())
	}
}

// startKernel is the kernel Sgemm used when the tests started.
var startKernel string

func TestMain(m *testing.M) {
	startKernel = Kernel()
	os.Exit(m.Run())
}

// TestDefaultKernelIsFastest: without DMLBENCH_GEMM a plain build uses
// the fastest kernel the CPU runs (the assembly one on AVX2/AVX-512), or,
// under DMLBENCH_KERNEL, the fastest at that level (one variable forces the
// eval kernels and the training GEMM alike).
func TestDefaultKernelIsFastest(t *testing.T) {
	if os.Getenv(EnvVar) != "" {
		t.Skip(EnvVar, " is set")
	}
	if startKernel != auto().name {
		t.Fatalf("default kernel %s, want %s (have %v)", startKernel, auto().name, Kernels())
	}
	if lvl := kernelsel.Chosen(); lvl > kernelsel.Portable && active.Load().level != lvl {
		t.Fatalf("kernel level %v, want %v (%s)", active.Load().level, lvl, kernelsel.EnvVar)
	}
	if kernelsel.Chosen() == kernelsel.Best() && startKernel != Kernels()[0] {
		t.Fatalf("default kernel %s, want the fastest %s (have %v)", startKernel, Kernels()[0], Kernels())
	}
	if runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasFMA && kernelsel.Chosen() == kernelsel.Best() && !strings.HasPrefix(startKernel, "avx") {
		t.Fatalf("AVX2 CPU but default kernel %s", startKernel)
	}
}

func TestEnvChoosesKernel(t *testing.T) {
	prev := Kernel()
	defer SetKernel(prev)
	if err := useEnv(" portable "); err != nil || Kernel() != "portable" {
		t.Fatalf("portable: %v (%s)", err, Kernel())
	}
	if err := useEnv(""); err != nil || Kernel() != auto().name {
		t.Fatalf("empty: %v (%s)", err, Kernel())
	}
	err := useEnv("avx1024")
	if err == nil || !strings.Contains(err.Error(), "DMLBENCH_GEMM=avx1024") || Kernel() != auto().name {
		t.Fatalf("bad value: %v (%s)", err, Kernel())
	}
}

// BenchmarkSgemm times the trainer's largest products with the active
// kernels and gonum; the Gflop/s figure is 2mnk per op.
func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	for _, sh := range [][3]int{{112, 512, 512}, {512, 512, 112}, {21952, 64, 288}, {288, 64, 21952}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, lda, bb, ldb, c, ldc := gemmCase(rng, blas.NoTrans, blas.NoTrans, m, n, k)
		if m == 288 {
			a, lda, bb, ldb, c, ldc = gemmCase(rng, blas.Trans, blas.NoTrans, m, n, k)
		}
		tA := blas.NoTrans
		if m == 288 {
			tA = blas.Trans
		}
		for _, name := range Kernels() {
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, name), func(b *testing.B) {
				var impl blas.Float32 = gonum.Implementation{}
				if name != "gonum" {
					prev := Kernel()
					defer SetKernel(prev)
					SetKernel(name)
					impl = Implementation{}
				}
				for i := 0; i < b.N; i++ {
					impl.Sgemm(tA, blas.NoTrans, m, n, k, 1, a, lda, bb, ldb, 0, c, ldc)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gflop/s")
			})
		}
	}
}

// TestAVXKernelsBitIdentical: the AVX-512 and AVX2 kernels run the same
// FMA chain per element in the same order (kc blocks, p ascending), so
// they give the same bits: a run repeats exactly across AVX2 and AVX-512
// machines.
func TestAVXKernelsBitIdentical(t *testing.T) {
	have := map[string]bool{}
	for _, k := range Kernels() {
		have[k] = true
	}
	if !have["avx512"] || !have["avx2"] {
		t.Skip("needs both AVX-512 and AVX2")
	}
	prev := Kernel()
	defer SetKernel(prev)
	rng := rand.New(rand.NewSource(5))
	for _, sh := range gemmShapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.NoTrans}, {blas.NoTrans, blas.Trans}, {blas.Trans, blas.NoTrans}} {
			a, lda, b, ldb, c0, ldc := gemmCase(rng, tr[0], tr[1], m, n, k)
			var out [2][]float32
			var out64 [2][]float64
			for i, name := range []string{"avx512", "avx2"} {
				SetKernel(name)
				out[i] = append([]float32(nil), c0...)
				Implementation{}.Sgemm(tr[0], tr[1], m, n, k, 0.75, a, lda, b, ldb, 0.5, out[i], ldc)
				out64[i] = widen(c0)
				Implementation{}.Dgemm(tr[0], tr[1], m, n, k, 0.75, widen(a), lda, widen(b), ldb, 0.5, out64[i], ldc)
			}
			for j := range out[0] {
				if math.Float32bits(out[0][j]) != math.Float32bits(out[1][j]) || math.Float64bits(out64[0][j]) != math.Float64bits(out64[1][j]) {
					t.Fatalf("%c%c m=%d n=%d k=%d: avx512 and avx2 differ at %d", tr[0], tr[1], m, n, k, j)
				}
			}
		}
	}
}

// TestSgemmPanelsMatchesSgemm: SgemmPanels of stored matrices (Matrix) gives
// Sgemm's bits with β = 0 on every kernel and thread count; gonum's kernel
// (both operands packed whole) agrees to rounding.
func TestSgemmPanelsMatchesSgemm(t *testing.T) {
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	prev := Kernel()
	defer SetKernel(prev)
	for _, name := range Kernels() {
		if err := SetKernel(name); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(2))
		for _, sh := range gemmShapes {
			m, n, k := sh[0], sh[1], sh[2]
			if m == 0 || n == 0 {
				continue
			}
			for _, tA := range trans {
				for _, tB := range trans {
					for _, th := range []int{1, 2} {
						a, lda, b, ldb, want, ldc := gemmCase(rng, tA, tB, m, n, k)
						got := append([]float32(nil), want...)
						impl := Implementation{Threads: th}
						impl.Sgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0, want, ldc)
						impl.SgemmPanels(m, n, k, 1.5, Matrix(a, lda, tA == blas.Trans), Matrix(b, ldb, tB == blas.NoTrans), got, ldc)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								g, w := got[i*ldc+j], want[i*ldc+j]
								if name != "gonum" && math.Float32bits(g) != math.Float32bits(w) {
									t.Fatalf("%s %c%c m=%d n=%d k=%d threads=%d: C[%d][%d] = %v, Sgemm %v", name, tA, tB, m, n, k, th, i, j, g, w)
								}
							}
						}
						if e := relErr(got, want, m, n, ldc); e > 1e-5 {
							t.Fatalf("%s %c%c m=%d n=%d k=%d: relative error %.3g", name, tA, tB, m, n, k, e)
						}
					}
				}
			}
		}
	}
}
