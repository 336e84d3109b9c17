package blas32

import (
	"sync"

	"github.com/dmlbench/dmlbench/internal/parallel"
)

// Block sizes (Goto & van de Geijn 2008): a kc×nc panel of op(B) is packed
// once per (jc, pc) and streamed from L2/L3; an mc×kc block of op(A) is
// packed per ic and stays in L2; a kc×nr micro-panel of B stays in L1
// while the kernel sweeps the A block. mc is a multiple of both 6 and 12.
const (
	blockK = 256
	blockM = 144
	blockN = 512
)

// parallelMin is the m·n·k below which Sgemm stays on the calling
// goroutine (starting goroutines costs more than it saves).
const parallelMin = 1 << 19

// operand is a row-major matrix as BLAS sees it: element (i, j) of op(M)
// is data[i·ld+j], or data[j·ld+i] when trans.
type operand[T elem] struct {
	data  []T
	ld    int
	trans bool
}

// workspace holds one goroutine's packing buffers and edge tile.
type workspace[T elem] struct {
	a, b, tile []T
}

var (
	workspaces32 = sync.Pool{New: func() any { return new(workspace[float32]) }}
	workspaces64 = sync.Pool{New: func() any { return new(workspace[float64]) }}
)

func pool[T elem]() *sync.Pool {
	var z T
	if any(z) == any(float32(0)) {
		return &workspaces32
	}
	return &workspaces64
}

func grow[T elem](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// packer is one operand of gemm seen as an n×k matrix V, n being the
// dimension that is not summed (the rows of op(A); the columns of op(B), so
// that V = op(B)ᵀ). pack writes the block of V with rows [i0, i0+n) and
// columns [p0, p0+kb) into dst as ⌈n/w⌉ micro-panels of kb steps of w
// values: dst[g·w·kb + p·w + r] = V[i0+g·w+r][p0+p], zero past row i0+n−1.
// A stored matrix packs with packRows; Panels implementations (an implicit
// im2col matrix) pack themselves.
type packer[T elem] interface {
	Pack(dst []T, i0, p0, n, kb, w int)
}

// rows is a stored operand as a packer: V[i][p] = data[i·ld+p], or
// data[p·ld+i] when trans.
type rows[T elem] struct{ o operand[T] }

func (r rows[T]) Pack(dst []T, i0, p0, n, kb, w int) { packRows(dst, r.o, i0, p0, n, kb, w) }

// shifted is src from row off on, for the stripes of a parallel gemm.
type shifted[T elem] struct {
	src packer[T]
	off int
}

func (s shifted[T]) Pack(dst []T, i0, p0, n, kb, w int) { s.src.Pack(dst, s.off+i0, p0, n, kb, w) }

// gemm computes C = α·A·Bᵀ + C for an m×n C from the m×k packer a and the
// n×k packer b (β already applied; with overwrite, C = α·A·Bᵀ and C is not
// read: β = 0), splitting C into row or column stripes over up to threads
// goroutines (0: GOMAXPROCS) for large shapes.
func gemm[T elem](kern tile[T], threads, m, n, k int, alpha T, a, b packer[T], c []T, ldc int, overwrite bool) {
	t := parallel.Threads(threads)
	if t <= 1 || m*n*k < parallelMin {
		gemmSerial(kern, m, n, k, alpha, a, b, c, ldc, overwrite)
		return
	}
	// Split the dimension whose packing would otherwise be repeated least:
	// every stripe packs all of the other operand.
	step, dim := kern.mr, m
	if n > m {
		step, dim = kern.nr, n
	}
	per := (dim + t - 1) / t
	per = (per + step - 1) / step * step
	stripes := (dim + per - 1) / per
	parallel.For(stripes, stripes, func(s int) {
		lo, hi := s*per, min((s+1)*per, dim)
		if dim == m {
			gemmSerial(kern, hi-lo, n, k, alpha, shifted[T]{a, lo}, b, c[lo*ldc:], ldc, overwrite)
		} else {
			gemmSerial(kern, m, hi-lo, k, alpha, a, shifted[T]{b, lo}, c[lo:], ldc, overwrite)
		}
	})
}

// gemmSerial is the blocked loop nest on one goroutine.
func gemmSerial[T elem](kern tile[T], m, n, k int, alpha T, a, b packer[T], c []T, ldc int, overwrite bool) {
	p := pool[T]()
	ws := p.Get().(*workspace[T])
	defer p.Put(ws)
	mr, nr := kern.mr, kern.nr
	ws.tile = grow(ws.tile, mr*nr)
	// When A is one mc block and B has several nc panels, A is packed once
	// (each k block at offset mPad·pc) instead of once per panel of B: a
	// convolution's few output channels against its many pixels.
	mPad := (m + mr - 1) / mr * mr
	packedA := m <= blockM && n > blockN
	if packedA {
		ws.a = grow(ws.a, mPad*k)
		for pc := 0; pc < k; pc += blockK {
			a.Pack(ws.a[mPad*pc:], 0, pc, m, min(blockK, k-pc), mr)
		}
	}
	for jc := 0; jc < n; jc += blockN {
		nb := min(blockN, n-jc)
		nbPad := (nb + nr - 1) / nr * nr
		for pc := 0; pc < k; pc += blockK {
			kb := min(blockK, k-pc)
			add := 1
			if overwrite && pc == 0 {
				add = 0 // the first k block stores α·acc (β = 0)
			}
			ws.b = grow(ws.b, nbPad*kb)
			b.Pack(ws.b, jc, pc, nb, kb, nr)
			for ic := 0; ic < m; ic += blockM {
				mb := min(blockM, m-ic)
				packA := ws.a
				if packedA {
					packA = ws.a[mPad*pc:]
				} else {
					mbPad := (mb + mr - 1) / mr * mr
					ws.a = grow(ws.a, mbPad*kb)
					packA = ws.a
					a.Pack(packA, ic, pc, mb, kb, mr)
				}
				for jr := 0; jr < nb; jr += nr {
					pb := &ws.b[jr*kb]
					nv := min(nr, nb-jr)
					for ir := 0; ir < mb; ir += mr {
						pa := &packA[ir*kb]
						mv := min(mr, mb-ir)
						ci := (ic+ir)*ldc + jc + jr
						if mv == mr && nv == nr {
							_ = c[ci+(mr-1)*ldc+nr-1] // the kernel writes up to here
							kern.fn(pa, pb, &c[ci], kb, ldc, add, alpha)
							continue
						}
						// Edge tile: through a buffer (α·acc, rounded as in a
						// full tile), then stored or added.
						tile := ws.tile
						kern.fn(pa, pb, &tile[0], kb, nr, 0, alpha)
						for r := 0; r < mv; r++ {
							row := c[ci+r*ldc : ci+r*ldc+nv]
							tr := tile[r*nr : r*nr+nv]
							if add == 0 {
								copy(row, tr)
								continue
							}
							for j := range row {
								row[j] += tr[j]
							}
						}
					}
				}
			}
		}
	}
}

// packRows copies the n×kb block at (i0, p0) of the stored matrix
// V[i][p] = a.data[i·ld+p] (a.data[p·ld+i] when a.trans) into dst as w-row
// micro-panels, each kb steps of w values (rows past n are zero). op(A) is
// packed as V = op(A), op(B) as V = op(B)ᵀ (operand trans flipped).
func packRows[T elem](dst []T, a operand[T], i0, p0, n, kb, w int) {
	for ir := 0; ir < n; ir += w {
		panel := dst[ir*kb : (ir+w)*kb]
		mv := min(w, n-ir)
		if mv < w {
			clear(panel)
		}
		if a.trans { // V[i][p] = data[p·ld+i]: rows of data are contiguous in i
			src := a.data[p0*a.ld+i0+ir:]
			copySteps(panel, src, kb, w, mv, a.ld)
			continue
		}
		for r := 0; r < mv; r++ { // V[i][p] = data[i·ld+p]
			src := a.data[(i0+ir+r)*a.ld+p0:]
			src = src[:kb]
			for p, v := range src {
				panel[p*w+r] = v
			}
		}
	}
}

// copySteps copies kb steps of w contiguous values, step p from src[p·ld:]
// to dst[p·width:], for the packing of an operand whose panel rows are
// contiguous.
func copySteps[T elem](dst, src []T, kb, width, w, ld int) {
	if kb == 0 {
		return
	}
	if d, ok := any(dst).([]float32); ok && w == width && copySteps32(d, any(src).([]float32), kb, w, ld) {
		return
	}
	for p := range kb {
		copy(dst[p*width:p*width+w], src[p*ld:p*ld+w])
	}
}

// copySteps32 is copySteps for float32 and a full width w of 6, 12, 16 or 32
// values (the AVX2 and AVX-512 kernels' mr and nr), copied as arrays
// through a local (a few vector moves; copy, or an array assignment
// between slices that may overlap, calls memmove once per step); false for
// another width.
func copySteps32(dst, src []float32, kb, w, ld int) bool {
	_ = src[(kb-1)*ld+w-1]
	_ = dst[kb*w-1]
	switch w {
	case 6:
		for p := range kb {
			v := *(*[6]float32)(src[p*ld:])
			*(*[6]float32)(dst[p*6:]) = v
		}
	case 12:
		for p := range kb {
			v := *(*[12]float32)(src[p*ld:])
			*(*[12]float32)(dst[p*12:]) = v
		}
	case 16:
		for p := range kb {
			v := *(*[16]float32)(src[p*ld:])
			*(*[16]float32)(dst[p*16:]) = v
		}
	case 32:
		for p := range kb {
			v := *(*[32]float32)(src[p*ld:])
			*(*[32]float32)(dst[p*32:]) = v
		}
	default:
		return false
	}
	return true
}
