// Package fma32 is the float32 arithmetic that every k-NN and k-means
// kernel of dmlbench shares (the AVX2 assembly, the portable Go kernels and
// the CPU emulation of the GPU kernels), written so that the Go compiler
// cannot change it: Go may fuse x·y + z into one FMA on some targets (arm64,
// ppc64, s390x, amd64 with GOAMD64=v3) and not on others, so a kernel that
// must give the same bits everywhere says which rounding it wants.
package fma32

import "math"

// FMA returns a·b + c rounded once to float32 (IEEE 754 fusedMultiplyAdd in
// binary32, round to nearest even): one lane of VFMADD231PS, or fmaf on a
// GPU.
//
// Go has no float32 FMA, and float32(math.FMA(a, b, c)) rounds twice. The
// product of two float32 is exact in float64 (48 significant bits), so
// s = a·b + c rounded to float64 is off by less than half a float64 ulp,
// and rounding s to float32 is the correctly rounded result unless s lies
// exactly on a midpoint of two float32 (rounding is monotone and the
// midpoints are float64 values). Only then is the float64 rounding error
// recovered exactly (TwoSum; Knuth 1969) to decide the side.
func FMA(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if OneRounding(s) {
		return float32(s)
	}
	return fmaSlow(a, b, c)
}

// OneRounding reports whether float32(s) is FMA(a, b, c) for
// s = float64(a)·float64(b) + float64(c): true unless s is a float32
// midpoint or below float32's normal range. Hot loops inline it and call
// FMA only when it is false (rarely):
//
//	t := float64(a)*float64(b) + float64(acc)
//	if fma32.OneRounding(t) { acc = float32(t) } else { acc = fma32.FMA(a, b, acc) }
func OneRounding(s float64) bool {
	// A float32 midpoint in the normal range has the float64 significand
	// bits 28..0 equal to 1<<28 (bit 28 is half a float32 ulp); |s| < 2⁻¹²⁶
	// (float32's subnormals) has coarser midpoints.
	u := math.Float64bits(s)
	return u&(1<<29-1) != 1<<28 && u<<1 >= minNormal32<<1
}

// minNormal32 is the float64 bit pattern of 2⁻¹²⁶, float32's smallest
// normal value.
const minNormal32 = 0x381 << 52

// fmaSlow is FMA where the float64 sum s may be a float32 midpoint or lies
// in float32's subnormal range.
func fmaSlow(a, b, cf float32) float32 {
	p, c := float64(a)*float64(b), float64(cf)
	s := p + c
	r := float32(s)
	if float64(r) == s || math.IsInf(s, 0) || math.IsNaN(s) {
		return r
	}
	bb := s - p
	e := (p - (s - bb)) + (c - bb)
	if e == 0 {
		return r
	}
	var o float32 // the other float32 neighbour of s
	if float64(r) < s {
		o = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		o = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if (float64(r)+float64(o))/2 != s { // not a midpoint: r is right
		return r
	}
	if (e > 0) == (float64(o) > s) {
		return o
	}
	return r
}

// Dot returns Σ_t a[t]·b[t] as one FMA chain in ascending t from 0 (the
// accumulation of every distance kernel). b must be at least as long as a.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for t, v := range a {
		s = FMA(v, b[t], s)
	}
	return s
}

// SqNorm returns ‖row‖² summed in float32 in ascending order, each square
// rounded before it is added (no FMA): the norms clustering's k-means and
// the GPU assignment add to the kernels' values.
func SqNorm(row []float32) float32 {
	var s float32
	for _, v := range row {
		s += float32(v * v) // the conversion forbids fusing (Go spec, Arithmetic operators)
	}
	return s
}
