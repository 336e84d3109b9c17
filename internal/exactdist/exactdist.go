package exactdist

import (
	"math"
	"math/big"
)

// u64 is float64's unit roundoff.
const u64 = 0x1p-53

// L2 returns ‖x − a‖² summed in float64 and a bound on its error. Each
// difference, square and addition rounds with relative error ≤ u = 2⁻⁵³,
// and every term is ≥ 0, so whatever the order of the additions (here four
// running sums, for speed) |v − ‖x − a‖²| ≤ γ_{D+2}·‖x − a‖² (Higham
// 2002, §3.1 and §4.2), at most (D + 3)·2u·v for D·u < 1/4; a float32
// difference is 0 or ≥ 2⁻¹⁴⁹ in magnitude, whose square 2⁻²⁹⁸ is a normal
// float64, so nothing underflows. v = 0 only for equal rows (bound 0).
func L2(x, a []float32) (v, err float64) {
	a = a[:len(x)]
	var s0, s1, s2, s3 float64
	t := 0
	for ; t+4 <= len(x); t += 4 {
		d0 := float64(x[t]) - float64(a[t])
		d1 := float64(x[t+1]) - float64(a[t+1])
		d2 := float64(x[t+2]) - float64(a[t+2])
		d3 := float64(x[t+3]) - float64(a[t+3])
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; t < len(x); t++ {
		d := float64(x[t]) - float64(a[t])
		s0 += d * d
	}
	v = (s0 + s1) + (s2 + s3)
	return v, v * float64(len(x)+3) * 2 * u64
}

// L2Tight returns ‖x − a‖² in float64 and a bound on its error, compensated:
// each difference and square is split into its float64 value and exact
// rounding error (TwoSum, FMA), the running sum's own errors are kept by
// TwoSum, and the small parts are summed apart (Ogita, Rump and Oishi
// 2005, Sum2). With A = Σ|small parts| the result is off by at most
// u·|v| + (3D + 3)·u·A (u = 2⁻⁵³; no float64 underflows, since float32
// differences are 0 or ≥ 2⁻¹⁴⁹ and their squares' errors ≥ 2⁻³⁵⁰), and
// exactly 0 when every part is exact — then equal values are equal
// distances, found without integers.
func L2Tight(x, a []float32) (v, err float64) {
	var s, comp, small float64
	for t := range x {
		d, ed := twoSum(float64(x[t]), -float64(a[t]))
		p := d * d
		ep := math.FMA(d, d, -p)
		var es float64
		s, es = twoSum(s, p)
		tail := ep + es + (2*d+ed)*ed
		comp += tail
		small += math.Abs(ep) + math.Abs(es) + math.Abs((2*d+ed)*ed)
	}
	v = s + comp
	if small == 0 {
		return v, 0
	}
	return v, (math.Abs(v)*u64 + small*float64(3*len(x)+3)*u64) * (1 + 0x1p-20)
}

// IP returns ⟨x, a⟩ in float64 and a bound on its error, compensated as
// L2Tight: the products of two float32 are exact in float64, the sum's errors
// are kept by TwoSum and summed apart; exact when they are all 0.
func IP(x, a []float32) (v, err float64) {
	var s, comp, small float64
	for t := range x {
		var es float64
		s, es = twoSum(s, float64(x[t])*float64(a[t]))
		comp += es
		small += math.Abs(es)
	}
	v = s + comp
	if small == 0 {
		return v, 0
	}
	return v, (math.Abs(v)*u64 + small*float64(2*len(x)+2)*u64) * (1 + 0x1p-20)
}

// twoSum returns a + b rounded and its exact rounding error (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// Cos returns ⟨x, a⟩ / ‖a‖ in float64 — the cosine of x and a times ‖x‖,
// which orders the rows a by their cosine to a fixed x — and a bound on
// its error: that of IP divided by ‖a‖, plus the relative error of ‖a‖
// (the sum of squares errs by γ_D, the square root and the division add
// u each): (D/2 + 3)·u·|v|, doubled for safety. a must not be zero.
func Cos(x, a []float32) (v, err float64) {
	ip, e := IP(x, a)
	var s float64
	for _, w := range a {
		s += float64(w) * float64(w)
	}
	n := math.Sqrt(s)
	v = ip / n
	return v, (e/n + math.Abs(v)*float64(len(x)+6)*u64) * (1 + 0x1p-20)
}

// fixed returns f·2¹⁴⁹ as an integer (exact for every finite float32).
func fixed(z *big.Int, f float32) *big.Int {
	b := math.Float32bits(f)
	e := int(b>>23) & 0xff
	m := int64(b & (1<<23 - 1))
	if e > 0 {
		m |= 1 << 23
		e--
	}
	z.SetInt64(m)
	z.Lsh(z, uint(e))
	if b>>31 != 0 {
		z.Neg(z)
	}
	return z
}

// CmpL2 returns the sign of ‖x − a‖² − ‖x − b‖², computed exactly as
// Σ (b_t − a_t)(2x_t − a_t − b_t) over integers scaled by 2¹⁴⁹.
func CmpL2(x, a, b []float32) int {
	var s, X, A, B, u, w big.Int
	for t := range x {
		fixed(&X, x[t])
		fixed(&A, a[t])
		fixed(&B, b[t])
		u.Sub(&B, &A)
		w.Lsh(&X, 1)
		w.Sub(&w, &A)
		w.Sub(&w, &B)
		u.Mul(&u, &w)
		s.Add(&s, &u)
	}
	return s.Sign()
}

// CmpIP returns the sign of ⟨x, a⟩ − ⟨x, b⟩, computed exactly.
func CmpIP(x, a, b []float32) int {
	var s, X, A, B, u big.Int
	for t := range x {
		fixed(&X, x[t])
		fixed(&A, a[t])
		fixed(&B, b[t])
		u.Sub(&A, &B)
		u.Mul(&u, &X)
		s.Add(&s, &u)
	}
	return s.Sign()
}

// CmpCos returns the sign of cos(x, a) − cos(x, b), computed exactly:
// with p = ⟨x, a⟩, q = ⟨x, b⟩ it compares p/‖a‖ with q/‖b‖ by their signs
// and then p²·‖b‖² with q²·‖a‖². a and b must not be zero.
func CmpCos(x, a, b []float32) int {
	var p, q, na, nb, X, A, B, u big.Int
	for t := range x {
		fixed(&X, x[t])
		fixed(&A, a[t])
		fixed(&B, b[t])
		p.Add(&p, u.Mul(&X, &A))
		q.Add(&q, u.Mul(&X, &B))
		na.Add(&na, u.Mul(&A, &A))
		nb.Add(&nb, u.Mul(&B, &B))
	}
	sp, sq := p.Sign(), q.Sign()
	if sp != sq {
		if sp > sq {
			return 1
		}
		return -1
	}
	if sp == 0 {
		return 0
	}
	var l, r big.Int
	l.Mul(&p, &p)
	l.Mul(&l, &nb)
	r.Mul(&q, &q)
	r.Mul(&r, &na)
	return l.Cmp(&r) * sp
}
