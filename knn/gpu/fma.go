package gpu

import "math"

// fma32 returns a·b + c rounded once to float32 (IEEE 754 fusedMultiplyAdd
// in binary32, round to nearest even): the arithmetic of one VFMADD231PS
// lane on the CPU and of fmaf / fma.rn.f32 on the GPU. Go has no float32
// FMA, and float32(math.FMA(...)) rounds twice, which is wrong when the
// float64 result lands exactly on a float32 midpoint. So: the product of two
// float32 is exact in float64 (48 significant bits), s = p + c is rounded
// once to float64 and its rounding error e is recovered exactly (Knuth's
// TwoSum); rounding s to float32 is then correct unless s is a float32
// midpoint and e ≠ 0, in which case the exact sum lies on e's side of the
// midpoint.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	cc := float64(c)
	s := p + cc
	r := float32(s)
	if float64(r) == s || math.IsInf(s, 0) || math.IsNaN(s) {
		return r
	}
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
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
