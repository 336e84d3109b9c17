package model

import (
	"fmt"
	"math/bits"
)

// The CNN's convolution block: one GEMM whose im2col operand is packed
// straight from the input map (blas32.SgemmPanels; no im2col matrix is
// stored), then one fused pool+bias+ReLU pass. Maps are channels-first
// over the whole batch between blocks, so that the pixels the GEMM packs
// side by side are contiguous in memory.
//
// Layouts, for a batch of B maps of C channels, H×W pixels, pixel index
// q = (b·H + y)·W + x:
//
//	NCHW: x[b][c·H·W + y·W + x], a B×(C·H·W) matrix (the network input,
//	  and the output of the last block, so that the flatten order is that
//	  of the type comment of CNN);
//	CNHW: x[c][q], a C×(B·H·W) matrix, one plane per channel (the GEMM's
//	  output and every other map); NCHW with C = 1 is the same;
//	NHWC: x[q][c], a (B·H·W)×C matrix (the gradient of the GEMM output,
//	  and a copy of a 16k-channel input, for the weight gradient);
//	im2col: col[q][c·9 + ky·3 + kx] = x(b, c, y+ky−1, x+kx−1), zero outside
//	  the map (stride 1, zero padding 1), a (B·H·W)×(C·9) matrix whose column
//	  order is the row order of the conv weight. It is never stored.

// tapEdges[t] are the map edges at which tap t = ky·3 + kx reads outside
// the map (edgeTop: y = 0, edgeBottom: y = H−1, edgeLeft: x = 0,
// edgeRight: x = W−1).
const (
	edgeTop = 1 << iota
	edgeBottom
	edgeLeft
	edgeRight
)

var tapEdges = func() (e [9]uint8) {
	for t := range e {
		ky, kx := t/3, t%3
		if ky == 0 {
			e[t] |= edgeTop
		}
		if ky == 2 {
			e[t] |= edgeBottom
		}
		if kx == 0 {
			e[t] |= edgeLeft
		}
		if kx == 2 {
			e[t] |= edgeRight
		}
	}
	return e
}()

// mapEdges returns, per pixel of B maps of H×W, the edges it lies on.
func mapEdges(B, H, W int) []uint8 {
	e := make([]uint8, B*H*W)
	for q := range e {
		y, x := q/W%H, q%W
		if y == 0 {
			e[q] |= edgeTop
		}
		if y == H-1 {
			e[q] |= edgeBottom
		}
		if x == 0 {
			e[q] |= edgeLeft
		}
		if x == W-1 {
			e[q] |= edgeRight
		}
	}
	return e
}

// tapShifts returns the offset of tap t's source pixel in a map W wide:
// (ky−1)·W + (kx−1).
func tapShifts(W int) (s [9]int) {
	for t := range s {
		s[t] = (t/3-1)*W + t%3 - 1
	}
	return s
}

// im2col is the implicit im2col matrix of a CNHW map x (C planes of n
// pixels each), V[q][c·9+t] = x[c·n + q + shift[t]], zero where tap t of
// pixel q falls outside its map; as blas32.Panels it packs w pixels side by
// side (the right operand of z = Wᵀ·colᵀ). The same type serves the input
// gradient, whose taps are mirrored (package layouts, convBlock).
type im2col struct {
	x     []float32
	n     int     // pixels per plane: B·H·W
	edge  []uint8 // per pixel, mapEdges
	shift [9]int
}

// Pack implements blas32.Panels: for each block of w pixels, one contiguous
// copy per (channel, tap) from the plane, then zeros where the tap leaves
// the map (the bits of inv).
func (m im2col) Pack(dst []float32, q0, p0, n, kb, w int) {
	if w == 1 {
		m.packOne(dst, q0, p0, n, kb)
		return
	}
	for g := 0; g*w < n; g++ {
		j0, nv := q0+g*w, min(w, n-g*w)
		panel := dst[g*w*kb : (g+1)*w*kb]
		var on [4]uint64 // bit r: pixel j0+r lies on that edge
		for r, e := range m.edge[j0 : j0+nv] {
			for k := range on {
				on[k] |= uint64(e>>k&1) << r
			}
		}
		pad := ^uint64(0) << nv // pixels past n: zero
		if w < 64 {
			pad &= 1<<w - 1
		}
		var inv [9]uint64
		for t, te := range tapEdges {
			inv[t] = pad
			for k := range on {
				if te>>k&1 != 0 {
					inv[t] |= on[k]
				}
			}
		}
		c, t := p0/9, p0%9
		for p := range kb {
			out := panel[p*w : p*w+w : p*w+w]
			start := c*m.n + j0 + m.shift[t]
			if start >= 0 && start+w <= len(m.x) {
				copyPixels(out, m.x[start:start+w])
				for zs := inv[t]; zs != 0; zs &= zs - 1 {
					out[bits.TrailingZeros64(zs)] = 0
				}
			} else {
				for r := range out {
					v := float32(0)
					if inv[t]>>r&1 == 0 {
						v = m.x[start+r]
					}
					out[r] = v
				}
			}
			if t++; t == 9 {
				c, t = c+1, 0
			}
		}
	}
}

// packOne is Pack for w = 1, one pixel per panel (V row-major: gonum's
// whole-matrix packing), where per-block masks would cost more than they
// save.
func (m im2col) packOne(dst []float32, q0, p0, n, kb int) {
	for g := range n {
		q := q0 + g
		e := m.edge[q]
		c, t := p0/9, p0%9
		for p := range dst[g*kb : (g+1)*kb] {
			v := float32(0)
			if e&tapEdges[t] == 0 {
				v = m.x[c*m.n+q+m.shift[t]]
			}
			dst[g*kb+p] = v
			if t++; t == 9 {
				c, t = c+1, 0
			}
		}
	}
}

// copyPixels copies src into dst (same length), through a local array for
// the kernels' register widths and 1 (gonum's whole-matrix packing): a few
// vector moves, where copy, or an array assignment between slices that may
// overlap, calls memmove.
func copyPixels(dst, src []float32) {
	switch len(dst) {
	case 32:
		v := *(*[32]float32)(src)
		*(*[32]float32)(dst) = v
	case 16:
		v := *(*[16]float32)(src)
		*(*[16]float32)(dst) = v
	case 12:
		v := *(*[12]float32)(src)
		*(*[12]float32)(dst) = v
	case 6:
		v := *(*[6]float32)(src)
		*(*[6]float32)(dst) = v
	case 4:
		v := *(*[4]float32)(src)
		*(*[4]float32)(dst) = v
	case 1:
		dst[0] = src[0]
	default:
		copy(dst, src)
	}
}

// im2colT is the transpose of im2col, V[c·9+t][q], packed w (channel, tap)
// rows side by side over kb pixels: the left operand of the weight gradient
// colᵀ·dz, summed over pixels.
type im2colT struct{ im2col }

// Pack implements blas32.Panels: per pixel step, the w rows' values side
// by side, each read from its (channel, tap) source row in order.
func (m im2colT) Pack(dst []float32, i0, q0, n, kb, w int) {
	var base [64]int
	var te [64]uint8
	edge := m.edge[q0 : q0+kb]
	for g := 0; g*w < n; g++ {
		panel := dst[g*w*kb : (g+1)*w*kb]
		nv := min(w, n-g*w)
		inside := true // every source of this block lies in x
		for r := range nv {
			c, t := (i0+g*w+r)/9, (i0+g*w+r)%9
			base[r], te[r] = c*m.n+q0+m.shift[t], tapEdges[t]
			inside = inside && base[r] >= 0 && base[r]+kb <= len(m.x)
		}
		if !inside || nv < w {
			m.packSlow(panel, base[:nv], te[:nv], edge, w)
			continue
		}
		bs, ts := base[:w], te[:w]
		for p, e := range edge {
			out := panel[p*w : p*w+w]
			for r, b := range bs {
				v := m.x[b+p]
				if e&ts[r] != 0 {
					v = 0
				}
				out[r] = v
			}
		}
	}
}

// packSlow is Pack's loop for a block with rows past n or sources outside
// x (off the map: zero).
func (m im2colT) packSlow(panel []float32, base []int, te []uint8, edge []uint8, w int) {
	for p, e := range edge {
		out := panel[p*w : p*w+w]
		for r := range out {
			v := float32(0)
			if r < len(base) {
				if i := base[r] + p; i >= 0 && i < len(m.x) && e&te[r] == 0 {
					v = m.x[i]
				}
			}
			out[r] = v
		}
	}
}

// im2colRows is im2colT with its rows in tap-major order,
// V[t·C+c][q] = x(q + shift[t], channel c), read from an NHWC copy xn of
// the input ((B·H·W)×C), where the rows of one tap are C contiguous values
// per pixel: packed w rows side by side over kb pixels (the right operand of
// the weight gradient dzᵀ·col), a pixel step is one copy per tap.
type im2colRows struct {
	xn    []float32
	C     int
	edge  []uint8
	shift [9]int
}

// Pack implements blas32.Panels.
func (m im2colRows) Pack(dst []float32, i0, q0, n, kb, w int) {
	for g := 0; g*w < n; g++ {
		panel := dst[g*w*kb : (g+1)*w*kb]
		nv := min(w, n-g*w)
		if nv < w {
			clear(panel)
		}
		for r := 0; r < nv; { // runs of rows of one tap
			t, c := (i0+g*w+r)/m.C, (i0+g*w+r)%m.C
			l := min(nv-r, m.C-c)
			m.packRun(panel, r, l, w, t, c, q0, kb)
			r += l
		}
	}
}

// packRun writes rows r..r+l−1 of a panel w wide, tap t, channels c.., for
// pixels q0..q0+kb−1.
func (m im2colRows) packRun(panel []float32, r, l, w, t, c, q0, kb int) {
	te, s, C := tapEdges[t], m.shift[t], m.C
	for p, e := range m.edge[q0 : q0+kb] {
		out := panel[p*w+r : p*w+r+l]
		if e&te != 0 { // off the map
			for k := range out {
				out[k] = 0
			}
			continue
		}
		copyPixels(out, m.xn[(q0+p+s)*C+c:][:l])
	}
}

// toNHWC copies the batch x (layout g) into the NHWC dst, maps b0..b1−1.
func toNHWC(g geom, x, dst []float32, b0, b1 int) {
	C, hw := g.C, g.H*g.W
	for b := b0; b < b1; b++ {
		out := dst[b*hw*C:][:hw*C]
		for c := range C {
			src := x[(c*g.B+b)*hw:][:hw]
			if g.nchw {
				src = x[(b*C+c)*hw:][:hw]
			}
			for q, v := range src {
				out[q*C+c] = v
			}
		}
	}
}

// geom is the geometry of a block input.
type geom struct {
	B, C, H, W int
	nchw       bool // the input layout: NCHW (the network input), or CNHW
}

func (g geom) String() string {
	l := "CNHW"
	if g.nchw {
		l = "NCHW"
	}
	return fmt.Sprintf("%d×%d×%d×%d %s", g.B, g.C, g.H, g.W, l)
}

// toPlanes copies the NCHW batch x of B maps into the CNHW dst.
func toPlanes(g geom, x, dst []float32) {
	hw := g.H * g.W
	for b := range g.B {
		for c := range g.C {
			copy(dst[(c*g.B+b)*hw:][:hw], x[(b*g.C+c)*hw:][:hw])
		}
	}
}

// fromPlanes copies the CNHW src of B maps into the NCHW dst.
func fromPlanes(g geom, src, dst []float32) {
	hw := g.H * g.W
	for b := range g.B {
		for c := range g.C {
			copy(dst[(b*g.C+c)*hw:][:hw], src[(c*g.B+b)*hw:][:hw])
		}
	}
}
